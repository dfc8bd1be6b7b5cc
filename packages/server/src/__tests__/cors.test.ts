import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend } from '../backend'
import { chatPath, closeHosts, errorBodyOf, send, startHost } from './harness'

afterEach(closeHosts)

const origin = 'http://127.0.0.1:5173'

describe('cors [R-SERVER-CORS]', () => {
  it('answers a preflight with the route method, the allowed headers and credentials', async () => {
    const server = await startHost({ cors: origin })
    const preflight = await send(server, {
      method: 'OPTIONS',
      path: chatPath,
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type, authorization, x-app-trace',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.body).toBe('')
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': origin,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers':
        'Authorization, Content-Type, Accept, If-None-Match, Cache-Control, x-app-trace',
      'access-control-max-age': '600',
    })
    // The client's conditional read: `If-None-Match` and its own `Cache-Control`, not safelisted.
    const read = await send(server, {
      method: 'OPTIONS',
      path: `${chatPath}/t/messages`,
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'cache-control, if-none-match',
      },
    })
    expect(read.headers['access-control-allow-methods']).toBe('GET')
    expect(read.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, Accept, If-None-Match, Cache-Control',
    )
    // An unknown path stays a 404, which the browser reports as a failed preflight.
    const unknown = await send(server, { method: 'OPTIONS', path: '/rest/none' })
    expect(unknown.status).toBe(404)
    expect(unknown.headers['access-control-allow-origin']).toBe(origin)
  })

  it('puts the origin on every answer: turn streams, push streams, REST errors and parser refusals', async () => {
    const server = await startHost({ cors: origin })
    const alice = { Origin: origin, Authorization: 'Bearer alice' }
    const answers = {
      turn: await send(server, {
        method: 'POST',
        path: chatPath,
        headers: { ...alice, 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'hi', sessionId: 'c1', newSession: true }),
      }),
      read: await send(server, { path: `${chatPath}/c1/messages`, headers: alice }),
      notFound: await send(server, { path: `${chatPath}/none/messages`, headers: alice }),
      unauthorized: await send(server, { path: `${chatPath}/c1/messages` }),
      wrongMethod: await send(server, { method: 'PUT', path: chatPath, headers: alice }),
      tooLarge: await send(server, { path: '/rest/none', headers: { 'X-Big': 'a'.repeat(65536) } }),
    }
    expect(answers.turn.headers['content-type']).toBe('text/event-stream; charset=UTF-8')
    expect(answers.turn.body).toContain('"type":"done"')
    expect(answers.read.status).toBe(200)
    expect([404, 401, 405, 431]).toEqual(
      [answers.notFound, answers.unauthorized, answers.wrongMethod, answers.tooLarge].map(
        (answer) => (errorBodyOf(answer), answer.status),
      ),
    )
    for (const [name, answer] of Object.entries(answers)) {
      expect(answer.headers['access-control-allow-origin'], name).toBe(origin)
      expect(answer.headers['access-control-allow-credentials'], name).toBe('true')
    }

    const controller = new AbortController()
    const push = await fetch(`${server.url}/rest/push`, {
      headers: { ...alice, Accept: 'text/event-stream' },
      signal: controller.signal,
    })
    expect(push.headers.get('content-type')).toBe('text/event-stream; charset=UTF-8')
    expect(push.headers.get('access-control-allow-origin')).toBe(origin)
    controller.abort()
  })

  it('allows any origin without credentials with "*"', async () => {
    const server = await startHost({ cors: '*' })
    const answer = await send(server, { path: '/rest/none', headers: { Origin: origin } })
    expect(answer.headers['access-control-allow-origin']).toBe('*')
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('is off by default: no Access-Control headers, and OPTIONS is a 405', async () => {
    const server = await startHost()
    const preflight = await send(server, {
      method: 'OPTIONS',
      path: chatPath,
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
    })
    expect(preflight.status).toBe(405)
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('refuses an option that is not an origin', () => {
    for (const cors of ['http://localhost:5173/', 'localhost:5173', 'https://a.example/app', '']) {
      expect(() => createPreviewChatBackend({ dev: true, cors }), cors).toThrow(TypeError)
    }
    expect(createPreviewChatBackend({ dev: true, cors: 'https://a.example' }).cors).toBe(
      'https://a.example',
    )
  })
})
