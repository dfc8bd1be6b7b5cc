import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createPreviewChatBackend } from '../backend'
import {
  chatPath,
  closeHosts,
  errorBodyOf,
  oneConnection,
  send,
  startHost,
  stopPath,
  upgradeHeaders,
} from './harness'

// Issue 12, a–f: each a request that crashed, jammed or told one user about another's threads.
const unhandled: unknown[] = []
const collect = (error: unknown) => unhandled.push(error)
beforeAll(() => {
  process.on('unhandledRejection', collect)
  process.on('uncaughtException', collect)
})
afterAll(() => {
  process.off('unhandledRejection', collect)
  process.off('uncaughtException', collect)
})
afterEach(closeHosts)

const malformedCookies = [
  'preview-chat-user=%',
  'preview-chat-user=%E0%A4%A',
  'preview-chat-user=a%zz',
]

describe('a. a WebSocket upgrade whose cookie is a malformed percent-escape', () => {
  it('answers 401 with a JSON error, and the server goes on serving upgrades', async () => {
    const server = await startHost()
    for (const cookie of malformedCookies) {
      const answer = await send(server, {
        path: '/rest/push',
        headers: { ...upgradeHeaders, Cookie: cookie },
      })
      expect(answer.status).toBe(401)
      expect(errorBodyOf(answer)).toMatchObject({ code: 'unauthorized' })
    }
    const alice = await send(server, {
      path: '/rest/push',
      headers: { ...upgradeHeaders, Cookie: 'preview-chat-user=alice' },
    })
    expect(alice.status).toBe(101)
    expect(unhandled).toEqual([])
  })
})

describe('b. a REST request whose cookie is a malformed percent-escape', () => {
  it('answers 401 with a JSON error on every route, and backend.fetch resolves', async () => {
    const server = await startHost()
    const requests = [
      { method: 'POST', path: chatPath, body: JSON.stringify({ message: 'hi' }) },
      { method: 'GET', path: `${chatPath}/t/messages` },
      { method: 'DELETE', path: stopPath('t', 'e') },
      { method: 'GET', path: '/rest/push', headers: { Accept: 'text/event-stream' } },
    ]
    for (const cookie of malformedCookies) {
      for (const { headers, ...request } of requests) {
        const answer = await send(server, { ...request, headers: { ...headers, Cookie: cookie } })
        expect(answer.status, `${request.method} ${request.path}`).toBe(401)
        expect(errorBodyOf(answer)).toMatchObject({ code: 'unauthorized' })
      }
    }
    const direct = await createPreviewChatBackend().fetch(
      new Request(`http://x${chatPath}/t/messages`, { headers: { Cookie: malformedCookies[0]! } }),
    )
    expect(direct.status).toBe(401)
    expect(unhandled).toEqual([])
  })
})

describe('c. a body the answer leaves unread does not jam the keep-alive connection', () => {
  const kb300 = 'x'.repeat(300 * 1024)
  const overMiB = JSON.stringify({ message: 'x'.repeat(1536 * 1024) })
  const cases = [
    { name: '401 (no user)', status: 401, method: 'POST', path: chatPath, user: null },
    { name: '403 (carol)', status: 403, method: 'POST', path: chatPath, user: 'carol' },
    { name: '404 (unknown route)', status: 404, method: 'POST', path: '/rest/none', user: 'bob' },
    { name: '405 (other method)', status: 405, method: 'PUT', path: chatPath, user: 'bob' },
  ].map((item) => ({ ...item, body: kb300, headers: {} }))
  cases.push(
    {
      name: '413 (Content-Length over 1 MiB)',
      status: 413,
      method: 'POST',
      path: chatPath,
      user: 'bob',
      body: overMiB,
      headers: {},
    },
    {
      name: '413 (chunked, counted over 1 MiB)',
      status: 413,
      method: 'POST',
      path: chatPath,
      user: 'bob',
      body: overMiB,
      headers: { 'Transfer-Encoding': 'chunked' },
    },
  )

  it.each(cases)(
    'answers the next request on the connection after a $name',
    async ({ status, method, path, user, body, headers }) => {
      const server = await startHost()
      const agent = oneConnection()
      try {
        const first = await send(server, {
          method,
          path,
          agent,
          body,
          headers: {
            'Content-Type': 'application/json',
            ...headers,
            ...(user && { Authorization: `Bearer ${user}` }),
          },
        })
        expect(first.status).toBe(status)
        errorBodyOf(first)
        const next = await send(server, {
          path: `${chatPath}/none/messages`,
          agent,
          headers: { Authorization: 'Bearer bob' },
        })
        expect(next.status).toBe(404)
        expect(next.reusedSocket).toBe(true)
      } finally {
        agent.destroy()
      }
    },
  )
})

describe('d. headers or a path over what the parser accepts', () => {
  it('answers 431 with a JSON error to 64 KB of headers and to a 60 KB path', async () => {
    const server = await startHost()
    const bigHeader = await send(server, {
      path: `${chatPath}/t/messages`,
      headers: { Authorization: 'Bearer alice', 'X-Padding': 'a'.repeat(64 * 1024) },
    })
    const bigPath = await send(server, {
      path: `/rest/${'p'.repeat(60 * 1024)}`,
      headers: { Authorization: 'Bearer alice' },
    })
    for (const answer of [bigHeader, bigPath]) {
      expect(answer.status).toBe(431)
      expect(errorBodyOf(answer)).toMatchObject({ code: 'headers_too_large' })
    }
    const after = await send(server, { path: '/rest/none' })
    expect(after.status).toBe(404)
  })
})
