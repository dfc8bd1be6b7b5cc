import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend } from '../backend'
import type { PreviewChatServer } from '../node/host'
import {
  chat,
  chatPath,
  closeHosts,
  createGate,
  errorBodyOf,
  del,
  oneConnection,
  post,
  readHistory,
  send,
  startHost,
  stopPath,
  turn,
  upgradeHeaders,
  collectUnhandled,
} from './harness'

// Issue 12, a–f: each a request that crashed, jammed or told one user about another's threads.
const unhandled = collectUnhandled()
afterEach(closeHosts)

const malformedCookies = [
  'preview-chat-user=%',
  'preview-chat-user=%E0%A4%A',
  'preview-chat-user=a%zz',
]

describe('a WebSocket upgrade whose cookie is a malformed percent-escape [R-SERVER-SCOPES R-SERVER-NEVER-CRASHES]', () => {
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

describe('a REST request whose cookie is a malformed percent-escape [R-SERVER-SCOPES]', () => {
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
    const direct = await createPreviewChatBackend({ dev: true }).fetch(
      new Request(`http://x${chatPath}/t/messages`, { headers: { Cookie: malformedCookies[0]! } }),
    )
    expect(direct.status).toBe(401)
    expect(unhandled).toEqual([])
  })
})

describe('a body the answer leaves unread does not jam the keep-alive connection [R-SERVER-KEEPALIVE]', () => {
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

describe('headers or a path over what the parser accepts [R-SERVER-HOST-REFUSALS]', () => {
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

describe("another user's thread reads exactly like no thread at all [R-SERVER-PRIVATE]", () => {
  /** The answer with `id` written as ID, so that two answers about two ids can be compared. */
  const about = async (response: Response, id: string) => ({
    status: response.status,
    type: response.headers.get('content-type'),
    body: (await response.text()).replaceAll(id, 'ID').replace(/"executionId":"[^"]+"/g, ''),
  })

  it("answers a message naming alice's thread as one naming an unknown id, and the same for a read", async () => {
    const server = await startHost()
    await (
      await turn(chat(server, { message: 'mine', sessionId: 'alice-t', newSession: true }))
    ).rest()
    const bobOnAlice = await about(
      await chat(server, { message: 'hi', sessionId: 'alice-t' }, 'bob'),
      'alice-t',
    )
    const bobOnNothing = await about(
      await chat(server, { message: 'hi', sessionId: 'no-such-t' }, 'bob'),
      'no-such-t',
    )
    expect(bobOnAlice).toEqual(bobOnNothing)
    expect(bobOnAlice.status).toBe(200)
    expect(bobOnAlice.body).toContain('"errorCode":"session_not_found"')

    const read = (id: string) =>
      fetch(`${server.url}${chatPath}/${id}/messages`, { headers: { Authorization: 'Bearer bob' } })
    const readAlice = await about(await read('alice-t'), 'alice-t')
    expect(readAlice).toEqual(await about(await read('no-such-t'), 'no-such-t'))
    expect(readAlice.status).toBe(404)
  })

  it('never lets a user claim, stop or read the thread id of another, even with newSession [R-SERVER-IDS-PER-USER]', async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep })
    const alices = await turn(chat(server, { message: 'alice', sessionId: 'x', newSession: true }))
    const { executionId } = await alices.until('execution-started')

    // bob names alice's id as new: he gets a thread of his own, hers is untouched.
    const bobs = await turn(
      chat(server, { message: 'bob', sessionId: 'x', newSession: true }, 'bob'),
    )
    expect((await bobs.until('execution-started')).sessionId).toBe('x')
    const bobStop = await fetch(`${server.url}${stopPath('x', executionId)}`, {
      method: 'DELETE',
      headers: { Authorization: 'Bearer bob' },
    })
    expect(bobStop.status).toBe(404)
    expect(server.backend.inspect.running()).toContain(executionId)

    // bob minted an id first: alice may still start her thread under it.
    await (
      await turn(chat(server, { message: 'first', sessionId: 'minted', newSession: true }, 'bob'))
    ).until('execution-started')
    const alicesMinted = await turn(
      chat(server, { message: 'second', sessionId: 'minted', newSession: true }),
    )
    expect((await alicesMinted.until('execution-started')).sessionId).toBe('minted')

    gate.open()
    await Promise.all([alices.rest(), bobs.rest(), alicesMinted.rest()])
    const texts = async (id: string, user: string) =>
      (await readHistory(server, id, user)).messages
        .filter((message) => message.role === 'user')
        .map((message) => message.content)
    expect(await texts('x', 'alice')).toEqual([[{ type: 'text', text: 'alice' }]])
    expect(await texts('x', 'bob')).toEqual([[{ type: 'text', text: 'bob' }]])
    expect(await texts('minted', 'alice')).toEqual([[{ type: 'text', text: 'second' }]])
    expect(await texts('minted', 'bob')).toEqual([[{ type: 'text', text: 'first' }]])
  })
})

describe('the inspection logs stay bounded on a long-running server [R-SERVER-BOUNDED-LOGS]', () => {
  it('keeps the latest logLimit requests and recordings, and still counts every request', async () => {
    const server = await startHost({ logLimit: 10 })
    for (let index = 0; index < 25; index++) {
      await send(server, { path: `/rest/none/${index}` })
    }
    for (let index = 0; index < 4; index++) {
      await (
        await turn(chat(server, { message: 'hi', sessionId: `f${index}`, newSession: true }))
      ).rest()
    }
    const { inspect } = server.backend
    expect(inspect.requests).toHaveLength(10)
    expect(inspect.requests.at(-1)).toMatchObject({ route: 'chat', method: 'POST', status: 200 })
    expect(inspect.requests[0]).toMatchObject({ route: 'unknown', path: '/rest/none/19' })
    expect(inspect.countRequests({ route: 'unknown' })).toBe(25)
    expect(inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(4)
    expect(inspect.countRequests({})).toBe(29)
    expect(inspect.recordings.length).toBeLessThanOrEqual(10)
    expect(inspect.recordings.at(-1)).toMatchObject({ status: 'success' })
  })

  it('keeps 1,000 entries by default', async () => {
    const backend = createPreviewChatBackend({ dev: true })
    for (let index = 0; index < 1200; index++) {
      await backend.fetch(new Request(`http://x/rest/none/${index}`))
    }
    expect(backend.inspect.requests).toHaveLength(1000)
    expect(backend.inspect.countRequests({ route: 'unknown', method: 'GET' })).toBe(1200)
  })
})

describe("a suspended run is named only through its own thread's route [R-SERVER-RUN-SCOPE]", () => {
  it("answers another agent's or project's resume and cancel as an unknown run, and touches neither thread", async () => {
    const server = await startHost()
    const suspended = await (
      await turn(chat(server, { message: '/suspend', sessionId: 't1', newSession: true }))
    ).until('tool-call-suspended')
    const { runId, toolCallId } = suspended.payload
    // The same user, the same thread id, under another agent and under another project.
    const others = ['/rest/projects/p1/agents/v2/a2/chat', '/rest/projects/p2/agents/v2/a1/chat']
    for (const other of others) {
      await (
        await turn(post(server, other, { message: 'hello', sessionId: 't1', newSession: true }))
      ).rest()
      const before = await readOther(server, other)
      const resumed = await post(server, `${other}/resume`, {
        runId,
        toolCallId,
        resumeData: { approved: true },
      })
      expect(resumed.status, other).toBe(404)
      expect(await resumed.json()).toMatchObject({ code: 'not_found' })
      const cancelled = await del(server, `${other}/runs/${runId}`)
      expect(cancelled.status, other).toBe(404)
      expect(cancelled.body).toMatchObject({ code: 'not_found' })
      expect(await readOther(server, other)).toEqual(before)
    }
    const own = await readHistory(server, 't1')
    expect(own.openSuspensions.map((open) => open.runId)).toEqual([runId])
    expect(await del(server, `${chatPath}/runs/${runId}`)).toEqual({
      status: 200,
      body: { data: { cancelled: true } },
    })
  })
})

async function readOther(server: PreviewChatServer, path: string): Promise<unknown> {
  const response = await fetch(`${server.url}${path}/t1/messages`, {
    headers: { Authorization: 'Bearer alice' },
  })
  expect(response.status).toBe(200)
  return response.json()
}

describe('the push channel needs agent:read over WebSocket as over SSE [R-SERVER-PUSH-SCOPE]', () => {
  it('refuses the upgrade of a user without agent:read with 403 forbidden, and admits carol', async () => {
    const server = await startHost({
      users: {
        dave: { id: 'dave', scopes: [] },
        carol: { id: 'carol', scopes: ['agent:read'] },
      },
    })
    const upgrade = (user: string) =>
      send(server, {
        path: '/rest/push',
        headers: { ...upgradeHeaders, Authorization: `Bearer ${user}` },
      })
    const dave = await upgrade('dave')
    expect(dave.status).toBe(403)
    expect(errorBodyOf(dave)).toMatchObject({ code: 'forbidden' })
    const sse = await send(server, {
      path: '/rest/push',
      headers: { Accept: 'text/event-stream', Authorization: 'Bearer dave' },
    })
    expect(sse.status).toBe(403)
    expect((await upgrade('carol')).status).toBe(101)
    expect(server.backend.inspect.pushConnections('dave')).toBe(0)
  })
})
