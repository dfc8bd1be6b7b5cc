import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  ssePushSource,
  websocketPushSource,
  type PushListener,
  type WebSocketLike,
} from '../wire/pushSource'

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
    onMessage: (message) => log.push(`message ${message.data.executionId}`),
    onConnectionChange: (connected) => log.push(connected ? 'connected' : 'disconnected'),
  }
  return { log, listener }
}

class FakeSocket {
  static sockets: FakeSocket[] = []
  onopen: (() => void) | null = null
  onmessage: ((event: { data: unknown }) => void) | null = null
  onclose: (() => void) | null = null
  onerror: (() => void) | null = null
  closed = false
  constructor(readonly url: string) {
    FakeSocket.sockets.push(this)
  }
  close() {
    this.closed = true
    this.onclose?.()
  }
}

describe('websocketPushSource [R-PUSH-SOURCES]', () => {
  beforeEach(() => {
    FakeSocket.sockets = []
  })

  it('delivers valid messages, ignores the rest, and reconnects with growing backoff', async () => {
    const { log, listener } = recorder()
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: FakeSocket as unknown as WebSocketLike,
      reconnectBaseMs: 100,
      reconnectMaxMs: 1_000,
      random: () => 1,
    }).subscribe(listener)
    const first = FakeSocket.sockets[0]!
    first.onopen?.()
    first.onmessage?.({ data: updated })
    first.onmessage?.({ data: '{"type":"executionStarted"}' })
    first.onmessage?.({ data: 'not json' })
    first.close()
    expect(log).toEqual(['connected', 'message e', 'disconnected'])

    await vi.advanceTimersByTimeAsync(99)
    expect(FakeSocket.sockets).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeSocket.sockets).toHaveLength(2)
    FakeSocket.sockets[1]!.close() // failed again, before opening: no second 'disconnected'
    await vi.advanceTimersByTimeAsync(199)
    expect(FakeSocket.sockets).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeSocket.sockets).toHaveLength(3)
    FakeSocket.sockets[2]!.onopen?.()
    expect(log.at(-1)).toBe('connected')

    stop()
    expect(FakeSocket.sockets[2]!.closed).toBe(true)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(FakeSocket.sockets).toHaveLength(3)
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
  beforeEach(() => {
    FakeSocket.sockets = []
  })

  /** Opens every socket at once and closes it 100 ms later, for `ms` of fake time. */
  async function flap(ms: number, options: { stableAfterMs?: number } = {}) {
    const { log, listener } = recorder()
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: FakeSocket as unknown as WebSocketLike,
      random: () => 0.5,
      ...options,
    }).subscribe(listener)
    let handled = 0
    for (let elapsed = 0; elapsed < ms; elapsed += 100) {
      for (const socket of FakeSocket.sockets.slice(handled)) socket.onopen?.()
      const opened = FakeSocket.sockets.slice(handled)
      handled = FakeSocket.sockets.length
      await vi.advanceTimersByTimeAsync(100)
      for (const socket of opened) if (!socket.closed) socket.close()
    }
    stop()
    return { connections: FakeSocket.sockets.length, log }
  }

  it('backs off instead of reconnecting twice a second: a minute costs a handful of connections', async () => {
    const { connections } = await flap(60_000)
    // 0.5 s doubling to 15 s (with the jitter at its middle): about ten in the first minute.
    expect(connections).toBeLessThanOrEqual(10)
    expect(connections).toBeGreaterThanOrEqual(6)
  })

  it('starts the backoff afresh once a connection stayed up, or delivered a message', async () => {
    const { log, listener } = recorder()
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: FakeSocket as unknown as WebSocketLike,
      reconnectBaseMs: 100,
      reconnectMaxMs: 10_000,
      stableAfterMs: 1_000,
      random: () => 1,
    }).subscribe(listener)
    // Three quick failures: 100, 200, 400 ms.
    for (const wait of [100, 200, 400]) {
      FakeSocket.sockets.at(-1)?.close()
      await vi.advanceTimersByTimeAsync(wait - 1)
      const before = FakeSocket.sockets.length
      await vi.advanceTimersByTimeAsync(1)
      expect(FakeSocket.sockets.length).toBe(before + 1)
    }
    // This one stays up past stableAfterMs: the next loss reconnects after the first step again.
    FakeSocket.sockets.at(-1)?.onopen?.()
    await vi.advanceTimersByTimeAsync(1_000)
    FakeSocket.sockets.at(-1)?.close()
    await vi.advanceTimersByTimeAsync(100)
    expect(FakeSocket.sockets).toHaveLength(5)
    // A short-lived one that delivered a message also counts as working.
    FakeSocket.sockets.at(-1)?.onopen?.()
    FakeSocket.sockets.at(-1)?.onmessage?.({ data: updated })
    FakeSocket.sockets.at(-1)?.close()
    await vi.advanceTimersByTimeAsync(100)
    expect(FakeSocket.sockets).toHaveLength(6)
    expect(log.filter((entry) => entry === 'connected')).toHaveLength(2)
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

describe('a WebSocket refused at the handshake (issue 27, row g) [R-PUSH-REFUSED]', () => {
  /** As a browser does on a 401/403 handshake: `error`, then `close`, each a task later. */
  class RefusedSocket extends FakeSocket {
    constructor(url: string) {
      super(url)
      setTimeout(() => {
        this.onerror?.()
        this.onclose?.()
      }, 5)
    }
  }
  beforeEach(() => {
    FakeSocket.sockets = []
  })

  it('backs off with jitter from the first refusal, up to reconnectMaxMs, and says so once', async () => {
    const refused: string[] = []
    const { log, listener } = recorder()
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: RefusedSocket as unknown as WebSocketLike,
      random: () => 0.5,
    }).subscribe({ ...listener, onRefused: (error) => refused.push(error.code) })
    // The first 0.6 s: the first attempt and, 375 ms after its refusal, one retry.
    await vi.advanceTimersByTimeAsync(600)
    expect(FakeSocket.sockets).toHaveLength(2)
    // A minute: waits of 375, 750, 1,500, 3,000, 6,000 ms, then 11,250 ms (the 15 s ceiling's).
    await vi.advanceTimersByTimeAsync(60_000)
    const count = FakeSocket.sockets.length
    expect(count).toBe(10)
    await vi.advanceTimersByTimeAsync(60_000)
    // At the ceiling: one attempt per 11.25–15 s.
    expect(FakeSocket.sockets.length - count).toBeGreaterThanOrEqual(4)
    expect(FakeSocket.sockets.length - count).toBeLessThanOrEqual(6)
    expect(refused).toEqual(['network_error'])
    expect(log).toEqual([])
    stop()
  })

  it('a channel that opens, then is refused again, reports the new run of refusals once', async () => {
    const refused: string[] = []
    let refuse = true
    class Flaky extends FakeSocket {
      constructor(url: string) {
        super(url)
        setTimeout(() => (refuse ? this.close() : this.onopen?.()), 5)
      }
    }
    const stop = websocketPushSource({
      url: 'ws://x/rest/push',
      WebSocket: Flaky as unknown as WebSocketLike,
      reconnectBaseMs: 100,
      random: () => 0.5,
    }).subscribe({ onMessage: () => {}, onRefused: (error) => refused.push(error.code) })
    await vi.advanceTimersByTimeAsync(1_000)
    expect(refused).toHaveLength(1)
    refuse = false
    await vi.advanceTimersByTimeAsync(5_000)
    refuse = true
    FakeSocket.sockets.at(-1)!.close()
    await vi.advanceTimersByTimeAsync(5_000)
    expect(refused).toHaveLength(2)
    stop()
  })
})
