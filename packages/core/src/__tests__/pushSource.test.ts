import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  ssePushSource,
  websocketPushSource,
  type PushListener,
  type WebSocketLike,
} from '../wire/pushSource'
import { readPushMessage } from '../wire/contract/push'
import { webSocketWorld } from './world/webSocket'

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

const updated = JSON.stringify({
  type: 'agentExecutionUpdated',
  data: { projectId: 'p', agentId: 'a', threadId: 't', executionId: 'e' },
})

function recorder() {
  const log: string[] = []
  const listener: PushListener = {
    // A source hands on every message, unchecked: the reader checks it (the session, a part).
    onMessage: (value) => {
      const parsed = readPushMessage(value)
      log.push(
        parsed.kind === 'message' ? `message ${parsed.message.data.executionId}` : parsed.kind,
      )
    },
    onInvalid: () => log.push('not json'),
    onConnectionChange: (connected) => log.push(connected ? 'connected' : 'disconnected'),
  }
  return { log, listener }
}

describe('websocketPushSource [R-PUSH-SOURCES]', () => {
  it('delivers valid messages, ignores the rest, and reconnects with growing backoff', async () => {
    const { log, listener } = recorder()
    const world = webSocketWorld({ latencyMs: 0 })
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: world.WebSocket as unknown as WebSocketLike,
      reconnectBaseMs: 100,
      reconnectMaxMs: 1_000,
      random: () => 1,
    }).subscribe(listener)
    const first = world.sockets[0]!
    first.acceptHandshake()
    await vi.advanceTimersByTimeAsync(0)
    first.serverSend(updated)
    first.serverSend('{"type":"executionStarted"}')
    first.serverSend('not json')
    await vi.advanceTimersByTimeAsync(0)
    first.serverClose(1001, 'going away')
    await vi.advanceTimersByTimeAsync(0)
    // Every message handed on (its reader ignores another type), what is not JSON reported.
    expect(log).toEqual(['connected', 'message e', 'ignored', 'not json', 'disconnected'])

    await vi.advanceTimersByTimeAsync(99)
    expect(world.sockets).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(world.sockets).toHaveLength(2)
    world.sockets[1]!.refuseHandshake() // failed again, before opening: no second 'disconnected'
    await vi.advanceTimersByTimeAsync(199)
    expect(world.sockets).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(world.sockets).toHaveLength(3)
    world.sockets[2]!.acceptHandshake()
    await vi.advanceTimersByTimeAsync(0)
    expect(log).toEqual([
      'connected',
      'message e',
      'ignored',
      'not json',
      'disconnected',
      'connected',
    ])

    stop()
    expect(world.sockets[2]!.readyState).toBe(world.WebSocket.CLOSING)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(world.sockets[2]!.closeEvent).toMatchObject({ code: 1005, wasClean: true })
    expect(world.sockets).toHaveLength(3)
    expect(log).toHaveLength(6) // the source's own close is no 'disconnected'
    expect(vi.getTimerCount()).toBe(0)
  })

  it('without a WebSocket implementation keeps retrying quietly instead of throwing', async () => {
    const { log, listener } = recorder()
    const original = globalThis.WebSocket
    // @ts-expect-error simulate an environment without WebSocket
    delete globalThis.WebSocket
    try {
      const stop = websocketPushSource({ url: 'ws://x', reconnectBaseMs: 10 }).subscribe(listener)
      expect(log).toEqual([])
      stop()
    } finally {
      globalThis.WebSocket = original
    }
  })
})

describe('ssePushSource [R-PUSH-SOURCES R-WIRE-CREDENTIALS]', () => {
  it('reads the push channel as SSE with the given headers and reconnects when it ends', async () => {
    const { log, listener } = recorder()
    const calls: RequestInit[] = []
    const encoder = new TextEncoder()
    const fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
      calls.push(init ?? {})
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode(`:ok\n\ndata: ${updated}\n\n`))
          controller.close()
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    })
    const stop = ssePushSource({
      url: '/rest/push',
      fetch,
      headers: () => ({ authorization: 'Bearer alice' }),
      reconnectBaseMs: 50,
      random: () => 1,
    }).subscribe(listener)
    await vi.advanceTimersByTimeAsync(0)
    expect(log).toEqual(['connected', 'message e', 'disconnected'])
    expect(calls[0]?.headers).toEqual({
      authorization: 'Bearer alice',
      accept: 'text/event-stream',
    })
    await vi.advanceTimersByTimeAsync(50)
    expect(fetch).toHaveBeenCalledTimes(2)
    stop()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(fetch).toHaveBeenCalledTimes(2)
  })

  it('treats an error answer as a lost connection and retries', async () => {
    const { log, listener } = recorder()
    const fetch = vi.fn(async () => new Response('no', { status: 401 }))
    const stop = ssePushSource({
      url: '/rest/push',
      fetch,
      reconnectBaseMs: 50,
      random: () => 1,
    }).subscribe(listener)
    await vi.advanceTimersByTimeAsync(0)
    expect(log).toEqual([])
    await vi.advanceTimersByTimeAsync(50)
    expect(fetch).toHaveBeenCalledTimes(2)
    stop()
  })
})

describe('a flapping channel (issue 11, row d: a proxy that drops it every 100 ms) [R-PUSH-FLAPPING]', () => {
  /** Opens every socket at once and drops it 100 ms later, for `ms` of fake time. */
  async function flap(ms: number, options: { stableAfterMs?: number } = {}) {
    const { log, listener } = recorder()
    const world = webSocketWorld({ handshake: 'open', latencyMs: 0 })
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: world.WebSocket as unknown as WebSocketLike,
      random: () => 0.5,
      ...options,
    }).subscribe(listener)
    for (let elapsed = 0; elapsed < ms; elapsed += 100) {
      const opened = world.open()
      await vi.advanceTimersByTimeAsync(100)
      for (const socket of opened) socket.drop()
    }
    stop()
    return { connections: world.sockets.length, log }
  }

  it('backs off instead of reconnecting twice a second: a minute costs a handful of connections', async () => {
    const { connections } = await flap(60_000)
    // 0.5 s doubling to 15 s (with the jitter at its middle): about ten in the first minute.
    expect(connections).toBeLessThanOrEqual(10)
    expect(connections).toBeGreaterThanOrEqual(6)
  })

  it('starts the backoff afresh once a connection stayed up, or delivered a message', async () => {
    const { log, listener } = recorder()
    const world = webSocketWorld({ latencyMs: 0 })
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: world.WebSocket as unknown as WebSocketLike,
      reconnectBaseMs: 100,
      reconnectMaxMs: 10_000,
      stableAfterMs: 1_000,
      random: () => 1,
    }).subscribe(listener)
    // Three quick refusals: 100, 200, 400 ms.
    for (const wait of [100, 200, 400]) {
      world.sockets.at(-1)!.refuseHandshake()
      await vi.advanceTimersByTimeAsync(0)
      await vi.advanceTimersByTimeAsync(wait - 1)
      const before = world.sockets.length
      await vi.advanceTimersByTimeAsync(1)
      expect(world.sockets.length).toBe(before + 1)
    }
    // This one stays up past stableAfterMs: the next loss reconnects after the first step again.
    world.sockets.at(-1)!.acceptHandshake()
    await vi.advanceTimersByTimeAsync(1_000)
    world.sockets.at(-1)!.drop()
    await vi.advanceTimersByTimeAsync(100)
    expect(world.sockets).toHaveLength(5)
    // A short-lived one that delivered a message also counts as working.
    world.sockets.at(-1)!.acceptHandshake()
    await vi.advanceTimersByTimeAsync(0)
    world.sockets.at(-1)!.serverSend(updated)
    await vi.advanceTimersByTimeAsync(0)
    world.sockets.at(-1)!.drop()
    await vi.advanceTimersByTimeAsync(100)
    expect(world.sockets).toHaveLength(6)
    expect(log).toEqual(['connected', 'disconnected', 'connected', 'message e', 'disconnected'])
    stop()
  })

  it('counts only an event stream as connected (a proxy answering 200 text/html is a failure)', async () => {
    const { log, listener } = recorder()
    const fetch = vi.fn(
      async () =>
        new Response('<html>sign in</html>', { headers: { 'content-type': 'text/html' } }),
    )
    const stop = ssePushSource({ url: '/rest/push', fetch, random: () => 1 }).subscribe(listener)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(log).toEqual([])
    expect(fetch.mock.calls.length).toBeLessThanOrEqual(8)
    stop()
  })

  it("honours the server's Retry-After before reconnecting, capped by reconnectMaxMs [R-PUSH-RETRY-AFTER]", async () => {
    const fetch = vi.fn(
      async () =>
        new Response('{"code":503,"message":"later"}', {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '8' },
        }),
    )
    const stop = ssePushSource({ url: '/rest/push', fetch, random: () => 1 }).subscribe(
      recorder().listener,
    )
    await vi.advanceTimersByTimeAsync(7_999)
    expect(fetch).toHaveBeenCalledTimes(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(fetch).toHaveBeenCalledTimes(2)
    stop()
  })
})

describe('a WebSocket refused at the handshake (issue 27, row g; issue 35, row f) [R-PUSH-REFUSED]', () => {
  it('backs off with jitter from the first refusal, up to reconnectMaxMs, and says so once', async () => {
    const refused: string[] = []
    const { log, listener } = recorder()
    // As a browser does on a 401/403 handshake: `error`, then `close` with a CloseEvent (1006).
    const world = webSocketWorld({ handshake: 'refuse' })
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: world.WebSocket as unknown as WebSocketLike,
      random: () => 0.5,
    }).subscribe({ ...listener, onRefused: (error) => refused.push(error.code) })
    // The sequence of attempts over the first 0.6 s: the first one and, 375 ms after its
    // refusal (at 5 + 375 ms), one retry (a CloseEvent taken for a retry-after made every wait NaN: one attempt
    // per handshake, about 120 here).
    const attempts: number[] = []
    for (let ms = 0; ms < 600; ms += 50) {
      await vi.advanceTimersByTimeAsync(50)
      attempts.push(world.sockets.length)
    }
    expect(attempts).toEqual([1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2])
    expect(world.sockets[0]!.closeEvent).toMatchObject({ code: 1006, wasClean: false })
    // A minute: waits of 375, 750, 1,500, 3,000, 6,000 ms, then 11,250 ms (the 15 s ceiling's).
    await vi.advanceTimersByTimeAsync(60_000)
    const count = world.sockets.length
    expect(count).toBe(10)
    await vi.advanceTimersByTimeAsync(60_000)
    // At the ceiling: one attempt per 11.25–15 s.
    expect(world.sockets.length - count).toBeGreaterThanOrEqual(4)
    expect(world.sockets.length - count).toBeLessThanOrEqual(6)
    expect(refused).toEqual(['network_error'])
    expect(log).toEqual([])
    stop()
  })

  it('a channel that opens, then is refused again, reports the new run of refusals once', async () => {
    const refused: string[] = []
    let refuse = true
    const world = webSocketWorld({ handshake: () => (refuse ? 'refuse' : 'open') })
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: world.WebSocket as unknown as WebSocketLike,
      reconnectBaseMs: 100,
      random: () => 0.5,
    }).subscribe({ onMessage: () => {}, onRefused: (error) => refused.push(error.code) })
    await vi.advanceTimersByTimeAsync(1_000)
    expect(refused).toHaveLength(1)
    refuse = false
    await vi.advanceTimersByTimeAsync(5_000)
    refuse = true
    world.sockets.at(-1)!.drop()
    await vi.advanceTimersByTimeAsync(5_000)
    expect(refused).toHaveLength(2)
    stop()
  })

  it('takes only a number for a retry-after: whatever a close callback is handed, the wait is a backoff', async () => {
    // A socket library that hands its own close event on (or a browser's CloseEvent) to the
    // source's callback: no NaN wait, the same backoff as a bare refusal.
    const world = webSocketWorld({ handshake: 'refuse', latencyMs: 0 })
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: world.WebSocket as unknown as WebSocketLike,
      reconnectBaseMs: 200,
      random: () => 0.5,
    }).subscribe({ onMessage: () => {} })
    await vi.advanceTimersByTimeAsync(149)
    expect(world.sockets).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(world.sockets).toHaveLength(2)
    stop()
  })
})
