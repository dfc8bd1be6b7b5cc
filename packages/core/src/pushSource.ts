import { createParser } from 'eventsource-parser'
import { parsePushMessage, type PushMessage } from './contract/push'
import { backoffDelay, defaultTimers, type Timers } from './environment'
import { resolveHeaders, type HeadersOption } from './transport'

/** What a push source reports to its listener. */
export interface PushListener {
  onMessage(message: PushMessage): void
  /** The channel (re)connected (`true`) or was lost (`false`). Reads follow a reconnect. */
  onConnectionChange?(connected: boolean): void
}

/**
 * The user's push channel (wire contract: `GET {baseUrl}/push`). Pass your own to reuse a
 * connection the app already has; the built-in ones are `websocketPushSource` and `ssePushSource`.
 */
export interface PushSource {
  /** Starts listening; returns the function that stops. */
  subscribe(listener: PushListener): () => void
}

export interface ReconnectOptions {
  timers?: Timers
  /** First reconnect delay, doubled per failed attempt (with jitter). Default 500 ms. */
  reconnectBaseMs?: number
  /** Longest reconnect delay. Default 15 s. */
  reconnectMaxMs?: number
  random?: () => number
}

/**
 * Keeps one connection open, reconnecting with backoff and jitter after every loss. `connect`
 * opens it and reports through the callbacks; it returns the function that closes it.
 */
function reconnecting(
  connect: (events: { opened(): void; message(data: string): void; closed(): void }) => () => void,
  options: ReconnectOptions,
): PushSource {
  const timers = options.timers ?? defaultTimers
  return {
    subscribe(listener) {
      let attempt = 0
      let stopped = false
      let connected = false
      let timer: unknown
      let close: (() => void) | undefined
      const start = () => {
        let live = true
        close = connect({
          opened() {
            if (!live) return
            attempt = 0
            connected = true
            listener.onConnectionChange?.(true)
          },
          message(data) {
            if (!live) return
            const parsed = parsePushMessage(data)
            if (parsed.kind === 'message') listener.onMessage(parsed.message)
          },
          closed() {
            if (!live) return
            live = false
            if (connected) listener.onConnectionChange?.(false)
            connected = false
            if (stopped) return
            const delay = backoffDelay(
              attempt++,
              options.reconnectBaseMs ?? 500,
              options.reconnectMaxMs ?? 15_000,
              options.random,
            )
            timer = timers.setTimeout(start, delay)
          },
        })
      }
      start()
      return () => {
        stopped = true
        timers.clearTimeout(timer)
        close?.()
      }
    },
  }
}

/** The WebSocket constructor's shape that the adapter needs (browser `WebSocket`, or `ws` in Node). */
export type WebSocketLike = new (url: string) => {
  onopen: ((event: never) => void) | null
  onmessage: ((event: { data: unknown }) => void) | null
  onclose: ((event: never) => void) | null
  onerror: ((event: never) => void) | null
  close(): void
}

/**
 * The push channel over WebSocket. Browsers cannot set headers on a WebSocket, so the user is
 * identified by cookie, as the platform does.
 */
export function websocketPushSource(
  options: ReconnectOptions & { url: string; WebSocket?: WebSocketLike },
): PushSource {
  return reconnecting(({ opened, message, closed }) => {
    const Socket =
      options.WebSocket ?? (globalThis.WebSocket as unknown as WebSocketLike | undefined)
    if (!Socket) {
      closed()
      return () => {}
    }
    let socket: InstanceType<WebSocketLike>
    try {
      socket = new Socket(options.url)
    } catch {
      closed()
      return () => {}
    }
    socket.onopen = opened
    socket.onmessage = (event) => {
      if (typeof event.data === 'string') message(event.data)
    }
    socket.onclose = closed
    socket.onerror = () => socket.close()
    return () => {
      socket.onclose = null
      socket.close()
    }
  }, options)
}

/** The push channel as an SSE response (`Accept: text/event-stream`), read with `fetch`. */
export function ssePushSource(
  options: ReconnectOptions & {
    url: string
    fetch?: typeof globalThis.fetch
    headers?: HeadersOption
  },
): PushSource {
  return reconnecting(({ opened, message, closed }) => {
    const controller = new AbortController()
    void (async () => {
      try {
        const headers = await resolveHeaders(options.headers)
        const response = await (options.fetch ?? globalThis.fetch)(options.url, {
          headers: { ...headers, accept: 'text/event-stream' },
          signal: controller.signal,
        })
        if (!response.ok || !response.body) return
        opened()
        const parser = createParser({ onEvent: (event) => message(event.data) })
        const reader = response.body.getReader()
        const decoder = new TextDecoder()
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          parser.feed(decoder.decode(value, { stream: true }))
        }
      } catch {
        // A failed or aborted connection is a closed one; `closed` schedules the reconnect.
      } finally {
        closed()
      }
    })()
    return () => controller.abort()
  }, options)
}
