import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend } from '../backend'
import {
  chat,
  chatPath,
  closeHosts,
  createGate,
  errorBodyOf,
  oneConnection,
  send,
  startHost,
  stopPath,
  turn,
} from './harness'

// A page of another site can POST to this server with the user's cookie and no preflight when the
// request is a CORS "simple request" (text/plain, no custom header): a turn started in the user's
// name. The server reads only JSON bodies, and checks the Origin of what a cookie authenticates.
afterEach(closeHosts)

const message = JSON.stringify({ message: 'from elsewhere', sessionId: 'x1', newSession: true })

describe('a body not typed application/json is refused with 415 [R-SERVER-JSON-ONLY]', () => {
  it('answers 415 with the error body, records nothing, and reads application/json; charset=utf-8', async () => {
    const server = await startHost()
    const agent = oneConnection()
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', null]) {
      for (const path of [chatPath, `${chatPath}/resume`]) {
        const answer = await send(server, {
          method: 'POST',
          path,
          headers: {
            Authorization: 'Bearer alice',
            ...(type !== null && { 'Content-Type': type }),
          },
          body: message,
          agent,
        })
        expect(answer.status, `${path} ${type}`).toBe(415)
        const body = errorBodyOf(answer)
        expect(body.code).toBe('unsupported_media_type')
        expect(body.message).toContain('Content-Type: application/json')
      }
    }
    expect(await server.backend.store.listThreads()).toEqual([])
    expect(await server.backend.store.listExecutions()).toEqual([])
    const json = await send(server, {
      method: 'POST',
      path: chatPath,
      headers: { Authorization: 'Bearer alice', 'Content-Type': 'application/json; charset=utf-8' },
      body: message,
      agent,
    })
    expect(json.status).toBe(200)
    expect(json.body).toContain('"type":"done"')
    agent.destroy()
  })
})

describe('a POST or DELETE authenticated by cookie checks the page Origin [R-SERVER-CSRF]', () => {
  const cookie = 'preview-chat-user=alice'
  const foreign = 'http://evil.example'

  it("refuses another site's page with 403 and records nothing; its own origin, cors, bearer and no Origin pass", async () => {
    const gate = createGate()
    const server = await startHost({ sleep: gate.sleep, cors: 'http://app.example' })
    const own = `http://127.0.0.1:${server.port}`
    const post = (headers: Record<string, string>) =>
      send(server, {
        method: 'POST',
        path: chatPath,
        headers: { 'Content-Type': 'application/json', ...headers },
        body: message,
        untilFirstChunk: true,
      })
    for (const origin of [foreign, 'null', `https://127.0.0.1:${server.port}`]) {
      const refused = await post({ Cookie: cookie, Origin: origin })
      expect(refused.status, origin).toBe(403)
      expect(errorBodyOf(refused).code).toBe('origin_not_allowed')
    }
    expect(await server.backend.store.listThreads()).toEqual([])

    // A running turn: another site's page may not stop it with the cookie either.
    gate.open()
    const reader = await turn(chat(server, { message: 'mine', sessionId: 't1', newSession: true }))
    const { executionId } = await reader.until('execution-started')
    const stop = await send(server, {
      method: 'DELETE',
      path: stopPath('t1', executionId),
      headers: { Cookie: cookie, Origin: foreign },
    })
    expect(stop.status).toBe(403)
    expect(errorBodyOf(stop).code).toBe('origin_not_allowed')
    await reader.rest()

    const passing: Record<string, string>[] = [
      { Cookie: cookie, Origin: own },
      { Cookie: cookie, Origin: 'http://app.example' },
      { Cookie: cookie },
      { Authorization: 'Bearer alice', Cookie: cookie, Origin: foreign },
      // Behind a proxy that ends TLS: the page is https:, and the browser says it is its origin.
      {
        Cookie: cookie,
        Origin: `https://127.0.0.1:${server.port}`,
        'Sec-Fetch-Site': 'same-origin',
      },
    ]
    for (const headers of passing) {
      expect((await post(headers)).status, JSON.stringify(headers)).toBe(200)
    }
    // A read changes nothing; CORS keeps its answer from another site's page.
    const read = await send(server, {
      path: `${chatPath}/x1/messages`,
      headers: { Cookie: cookie, Origin: foreign },
    })
    expect(read.status).toBe(200)
    // What the client needs of an answer (a Retry-After, the Date it counts from, the ETag, what
    // the server offers) is exposed.
    expect(read.headers['access-control-expose-headers']).toBe(
      'Retry-After, Date, ETag, Preview-Chat-Capabilities',
    )
    expect(read.headers['preview-chat-capabilities']).toBe('message-dedupe')
  })

  it("another site's page stays refused though it claims same-origin from another name (DNS rebinding)", async () => {
    const server = await startHost()
    const refused = await send(server, {
      method: 'POST',
      path: chatPath,
      headers: {
        'Content-Type': 'application/json',
        Cookie: cookie,
        Host: 'evil.example',
        Origin: 'https://evil.example',
        'Sec-Fetch-Site': 'same-origin',
      },
      body: message,
    })
    expect(refused.status).toBe(403)
  })

  it('leaves the n8n-2.41 flavor as n8n answers: its browser-id header already needs a preflight', async () => {
    const backend = createPreviewChatBackend({ dev: true, flavor: 'n8n-2.41', deltaMs: 0 })
    const response = await backend.fetch(
      new Request(`http://localhost${chatPath}`, {
        method: 'POST',
        headers: { ...backend.credentials('alice'), 'Content-Type': 'text/plain', Origin: foreign },
        body: message,
      }),
    )
    expect(response.status).toBe(200)
    await response.text()
    await backend.close()
  })
})
