import { PreviewChatError } from './contract/errors'
import { parseJson } from './contract/result'
import { parseRetryAfter } from './contract/rest'
import { backoffDelay } from '../engine/backoff'
import { defaultTimers, type Timers } from '../platform/environment'
import { readSse } from './sse'
import { resolveHeaders, type HeadersOption } from './transport'
import { explain } from './contract/explain'

/** What a push source reports to its listener. */
export interface PushListener {
  /**
   * A message of the channel, whatever its type, unchecked: a built-in source's frame as parsed
   * JSON, or what an app's own source hands over (a `PushMessage`, or a type the contract does
   * not know). Each reader checks it with its own parser, never trusting it: the session
   * `readPushMessage`, an opt-in part the type it knows (the queue of `@preview-chat/core/queue`
   * reads `agentMessageQueueUpdated`), so that a client without the part carries none of it.
   */
  onMessage(message: unknown): void
  /**
   * A frame that is no message at all (not JSON); the client reports it through `onWarning` and
   * goes on listening.
   */
  onInvalid?(error: PreviewChatError): void
  /** The channel (re)connected (`true`) or was lost (`false`). Reads follow a reconnect. */
  onConnectionChange?(connected: boolean): void
  /**
   * A connection attempt ended before it ever opened (refused at the handshake: a wrong cookie, a
   * proxy, 401/403, or no server). Reported once per run of refusals; the source keeps retrying
   * with backoff and jitter from the first refusal, at most every `reconnectMaxMs`.
   */
  onRefused?(error: PreviewChatError): void
}

/** The warning for a push message that is not of the wire contract (not JSON, a malformed one). */
export const pushIgnored = (error: PreviewChatError) =>
  `Ignored a push message that is not of the wire contract: ${error.message}${explain('push-ignored')}`

/**
 * The user's push channel (wire contract: `GET {baseUrl}/push`). Pass your own to reuse a
 * connection the app already has; the built-in ones are `websocketPush()` and `ssePush()`.
 */
export interface PushSource {
  /** Starts listening; returns the function that stops. */
  subscribe(listener: PushListener): () => void
}

/**
 * What the client tells a push adapter: where the channel is and how this client connects. An
 * adapter's own options (e.g. `ssePush({ timers })`) win over these.
 */
export interface PushContext {
  /** The client's `pushUrl`, else `{baseUrl}/push` (an `http(s)` URL or a path). */
  url: string
  /** The client's `fetch`. */
  fetch: typeof globalThis.fetch
  /** The client's `headers`, when it has some (a WebSocket cannot send them). */
  headers?: HeadersOption
  /** The client's `credentials`, when set. */
  credentials?: RequestCredentials
  /** The client's timers (reconnect backoff). */
  timers: Timers
}

/**
 * A push channel the client opens on its own `pushUrl`, with its `fetch`, headers and timers:
 * what `websocketPush()` and `ssePush()` return. `null`: no channel (the session polls). Pass the
 * adapters, not `websocketPushSource` / `ssePushSource` themselves: those take a URL of their own
 * (`ws(s)://` for the WebSocket one).
 */
export type PushAdapter = (context: PushContext) => PushSource | null

export interface ReconnectOptions {
  timers?: Timers
  /** First reconnect delay, doubled per failed attempt (with jitter). Default 500 ms. */
  reconnectBaseMs?: number
  /** Longest reconnect delay (and longest `Retry-After` honoured). Default 15 s. */
  reconnectMaxMs?: number
  /**
   * How long a connection must stay up (or deliver a message) before the backoff starts again
   * from its first step. A channel that connects and drops at once (a flaky proxy) keeps backing
   * off instead of reconnecting twice a second. Default 10 s.
   */
  stableAfterMs?: number
  random?: () => number
}

/** What a connection reports to `reconnecting`. */
interface ConnectionEvents {
  opened(): void
  message(data: string): void
  /**
   * The connection ended; `retryAfterMs`: the server asked to wait that long. Only a finite,
   * non-negative number counts: anything else (a browser's `CloseEvent` handed on as it came) is
   * no retry-after, so the backoff alone decides.
   */
  closed(retryAfterMs?: number): void
}

/**
 * Keeps one connection open, reconnecting with backoff and jitter after every loss. `connect`
 * opens it and reports through the callbacks; it returns the function that closes it.
 */
function reconnecting(
  connect: (events: ConnectionEvents) => () => void,
  options: ReconnectOptions,
): PushSource {
  const timers = options.timers ?? defaultTimers
  const base = options.reconnectBaseMs ?? 500
  const max = options.reconnectMaxMs ?? 15_000
  const stableAfterMs = options.stableAfterMs ?? 10_000
  return {
    subscribe(listener) {
      let attempt = 0
      /** The refusals (attempts that never opened) since the channel last worked. */
      let refusals = 0
      let stopped = false
      let openedAt: number | null = null
      let timer: unknown
      let close: (() => void) | undefined
      const start = () => {
        let live = true
        close = connect({
          opened() {
            if (!live) return
            refusals = 0
            openedAt = timers.now()
            listener.onConnectionChange?.(true)
          },
          message(data) {
            if (!live) return
            // A channel that delivers is a working one: the next loss starts the backoff afresh.
            attempt = 0
            const parsed = parseJson(data, 'A push message')
            if (parsed.success) listener.onMessage(parsed.value)
            else listener.onInvalid?.(parsed.error)
          },
          closed(retryAfterMs) {
            if (!live) return
            live = false
            if (openedAt !== null) {
              if (timers.now() - openedAt >= stableAfterMs) attempt = 0
              listener.onConnectionChange?.(false)
            } else if (!stopped && refusals++ === 0)
              listener.onRefused?.(
                new PreviewChatError(
                  'network_error',
                  `The push channel was refused before it opened.${explain('push-refused', max)}`,
                ),
              )
            openedAt = null
            if (stopped) return
            // Only a finite number is a wait (never `NaN` into `setTimeout`: a reconnect storm).
            const delay = Math.max(
              backoffDelay(attempt++, base, max, options.random ?? Math.random),
              Number.isFinite(retryAfterMs) ? Math.min(retryAfterMs as number, max) : 0,
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
    const Socket = options.WebSocket ?? (globalThis.WebSocket as unknown as WebSocketLike)
    let socket: InstanceType<WebSocketLike>
    try {
      // Throws where there is no WebSocket, or for a URL it refuses: a failed attempt either way.
      socket = new Socket(options.url)
    } catch {
      closed()
      return () => {}
    }
    // Each callback gets the browser's event; `closed` takes none (a `CloseEvent` is no retry-after).
    socket.onopen = opened
    socket.onmessage = (event) => {
      if (typeof event.data === 'string') message(event.data)
    }
    socket.onclose = () => closed()
    socket.onerror = () => socket.close()
    return () => {
      socket.onclose = null
      socket.close()
    }
  }, options)
}

/**
 * The client's push channel over WebSocket (`push: websocketPush()`), on its `pushUrl` made
 * `ws(s)://`. The user is identified by cookie: a browser WebSocket cannot send headers.
 */
export function websocketPush(
  options: ReconnectOptions & { WebSocket?: WebSocketLike } = {},
): PushAdapter {
  return (context) =>
    websocketPushSource({ timers: context.timers, ...options, url: toWebSocketUrl(context.url) })
}

/** `http(s)://…` → `ws(s)://…`; a path is resolved against the page's location. */
function toWebSocketUrl(url: string): string {
  const base = typeof location === 'undefined' ? 'http://localhost' : location.href
  const absolute = new URL(url, base)
  absolute.protocol = absolute.protocol === 'https:' ? 'wss:' : 'ws:'
  return absolute.href
}

/**
 * The client's push channel as an SSE response over its own `fetch` (`push: ssePush()`), with its
 * headers and credentials: what a server behind auth headers, or a proxy without WebSocket, needs.
 */
export function ssePush(options: ReconnectOptions = {}): PushAdapter {
  return (context) => ssePushSource({ ...context, ...options })
}

/**
 * The push channel as an SSE response (`Accept: text/event-stream`), read with `fetch`. Only an
 * answer that is an event stream counts as connected (a proxy's HTML page is a failed attempt).
 */
export function ssePushSource(
  options: ReconnectOptions & {
    url: string
    fetch?: typeof globalThis.fetch
    headers?: HeadersOption
    /** `fetch`'s `credentials`, e.g. `'include'` for a cookie on another origin. */
    credentials?: RequestCredentials
  },
): PushSource {
  return reconnecting(({ opened, message, closed }) => {
    const controller = new AbortController()
    void (async () => {
      let retryAfterMs: number | undefined
      try {
        const headers = await resolveHeaders(options.headers)
        const response = await (options.fetch ?? globalThis.fetch)(options.url, {
          headers: { ...headers, accept: 'text/event-stream' },
          signal: controller.signal,
          ...(options.credentials && { credentials: options.credentials }),
        })
        const isEventStream = /^text\/event-stream\b/i.test(
          response.headers.get('content-type') ?? '',
        )
        if (!response.ok || !isEventStream || !response.body) {
          retryAfterMs = parseRetryAfter(
            response.headers.get('retry-after'),
            response.headers.get('date'),
          )
          void response.body?.cancel().catch(() => {})
          return
        }
        opened()
        await readSse(
          response.body,
          (messages) => {
            for (const data of messages) message(data)
            return true
          },
          controller.signal,
        )
      } catch {
        // A failed or aborted connection is a closed one; `closed` schedules the reconnect.
      } finally {
        closed(retryAfterMs)
      }
    })()
    return () => controller.abort()
  }, options)
}
