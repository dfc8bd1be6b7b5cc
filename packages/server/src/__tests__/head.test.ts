import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend } from '../backend'
import type { PreviewChatServer } from '../node/host'
import {
  chat,
  chatPath,
  closeHosts,
  collectUnhandled,
  oneConnection,
  send,
  startHost,
  turn,
  type Answer,
} from './harness'
import { n8nAuth, startN8nHost } from './n8n-harness'

// Issue 27, row l: "All general-purpose servers MUST support the methods GET and HEAD" (RFC 9110,
// 9.1), and HEAD answers as GET without the body (9.3.2). The server answered 405 to it.
const unhandled = collectUnhandled()
afterEach(async () => {
  await closeHosts()
  expect(unhandled).toEqual([])
})

/** The same request as GET and as HEAD over one kept-alive connection, then a GET again. */
async function getAndHead(
  server: PreviewChatServer,
  path: string,
  headers: Record<string, string>,
): Promise<{ get: Answer; head: Answer; after: Answer }> {
  const agent = oneConnection()
  try {
    const get = await send(server, { path, headers, agent })
    const head = await send(server, { method: 'HEAD', path, headers, agent })
    // The HEAD's Content-Length announced no body: the connection goes on with the next answer.
    const after = await send(server, { path, headers, agent })
    expect(after.reusedSocket).toBe(true)
    return { get, head, after }
  } finally {
    agent.destroy()
  }
}

/** The headers that must agree between GET and HEAD (not the date). */
const comparable = ({ headers }: Answer) => {
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...rest } = headers
  return rest
}

describe('HEAD on a GET route answers as GET without a body [R-SERVER-HEAD]', () => {
  it('a history read: the same status and headers, Content-Length included, and no body', async () => {
    const server = await startHost()
    await (
      await turn(chat(server, { message: '/words 2', sessionId: 't1', newSession: true }))
    ).rest()
    const auth = { Authorization: 'Bearer alice' }
    for (const path of [`${chatPath}/t1/messages`, `${chatPath}/unknown/messages`]) {
      const { get, head, after } = await getAndHead(server, path, auth)
      expect(head.status, path).toBe(get.status)
      expect(comparable(head), path).toEqual(comparable(get))
      expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(get.body))
      expect(head.body).toBe('')
      expect(after.body).toBe(get.body)
    }
    const noUser = await getAndHead(server, `${chatPath}/t1/messages`, {})
    expect([noUser.head.status, noUser.head.body]).toEqual([401, ''])
    expect(comparable(noUser.head)).toEqual(comparable(noUser.get))
  })

  it('in-process too: the Fetch handler answers HEAD with no body at all', async () => {
    const backend = createPreviewChatBackend({ dev: true, deltaMs: 0 })
    const request = (method: string) =>
      backend.fetch(
        new Request(`http://x${chatPath}/none/messages`, {
          method,
          headers: { Authorization: 'Bearer alice' },
        }),
      )
    const [get, head] = [await request('GET'), await request('HEAD')]
    expect([head.status, head.body]).toEqual([404, null])
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'))
    expect(backend.inspect.countRequests({ route: 'messages', method: 'HEAD' })).toBe(1)
    await backend.close()
  })

  it('the SSE push: its headers, no stream, and no subscription left behind', async () => {
    const server = await startHost()
    const head = await send(server, {
      method: 'HEAD',
      path: '/rest/push',
      headers: { Authorization: 'Bearer alice', Accept: 'text/event-stream' },
    })
    expect(head.status).toBe(200)
    expect(head.headers['content-type']).toBe('text/event-stream; charset=UTF-8')
    expect(head.body).toBe('')
    expect(server.backend.inspect.pushConnections('alice')).toBe(0)
  })

  it('other methods stay 405, and the Allow of a GET route names HEAD', async () => {
    const server = await startHost()
    const auth = { Authorization: 'Bearer alice' }
    const headChat = await send(server, { method: 'HEAD', path: chatPath, headers: auth })
    expect([headChat.status, headChat.headers.allow, headChat.body]).toEqual([405, 'POST', ''])
    const postRead = await send(server, {
      method: 'PUT',
      path: `${chatPath}/t1/messages`,
      headers: auth,
    })
    expect([postRead.status, postRead.headers.allow]).toEqual([405, 'GET, HEAD'])
  })

  it('in the n8n-2.41 flavor too, as Express answers HEAD with its GET route', async () => {
    const server = await startN8nHost()
    const reader = await fetch(`${server.url}${chatPath}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...n8nAuth() },
      body: JSON.stringify({ message: '/words 1', sessionId: 't1' }),
    })
    await reader.text()
    const { get, head } = await getAndHead(server, `${chatPath}/t1/messages`, n8nAuth())
    expect([get.status, head.status, head.body]).toEqual([200, 200, ''])
    expect(comparable(head)).toEqual(comparable(get))
  })
})
