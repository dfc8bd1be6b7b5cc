/**
 * A WebSocket that behaves as a browser's does (WHATWG WebSockets, "The WebSocket interface"),
 * where the kind fakes did not:
 *
 * - every callback gets an event: `open` an `Event`, `message` a `MessageEvent`, `error` an
 *   `Event`, `close` a CloseEvent-like `Event` with `code`, `reason`, `wasClean`;
 * - a handshake refused (401/403, a proxy, no server) fires `error`, then `close` with code 1006,
 *   `wasClean: false`, `reason: ''`, never `open`;
 * - `close()` from the client never calls back at once: an open socket goes `CLOSING`, and its
 *   `close` event (code 1005 when no code was given, `wasClean: true`) comes a task later; a
 *   socket still connecting fails (`error`, then `close` 1006) a task later;
 * - `readyState` goes `CONNECTING` → `OPEN` → `CLOSING` → `CLOSED`; `send()` while connecting
 *   throws `InvalidStateError`; a URL that is not `ws(s)://` throws `SyntaxError` in the
 *   constructor.
 *
 * Each event is its own task (`setTimeout(…, 0)` plus the world's `latencyMs` for the
 * handshake), so a test with fake timers advances time to see it.
 *
 * ```ts
 * const world = webSocketWorld({ handshake: 'refuse' })
 * websocketPushSource({ url: 'ws://x/rest/push', WebSocket: world.WebSocket })
 * world.sockets[0].serverSend('…') // for an accepted one
 * ```
 */

/**
 * Resolves once the events already queued by the world's sockets (each a `setTimeout` task) have
 * fired: a timer set now runs after the ones set before it. Under fake timers, advance time instead.
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => globalThis.setTimeout(resolve, 1))
}

/** What a `close` event carries; Node 20 has no global `CloseEvent`. */
export class CloseEventLike extends Event {
  readonly code: number
  readonly reason: string
  readonly wasClean: boolean
  constructor(init: { code: number; reason?: string; wasClean: boolean }) {
    super('close')
    this.code = init.code
    this.reason = init.reason ?? ''
    this.wasClean = init.wasClean
  }
}

export interface WebSocketWorldOptions {
  /**
   * What the server does with each new socket's handshake: `'open'` accepts it, `'refuse'`
   * refuses it (error, close 1006), `'manual'` leaves it to the test (`acceptHandshake()`,
   * `refuseHandshake()`). A function decides per socket (its index from 0). Default `'manual'`.
   */
  handshake?: 'open' | 'refuse' | 'manual' | ((index: number) => 'open' | 'refuse' | 'manual')
  /** How long a handshake takes before it opens or is refused. Default 5 ms. */
  latencyMs?: number
  /** Called with each new socket, after its handshake was planned (e.g. to drop it later). */
  onSocket?: (socket: BrowserWebSocket) => void
}

/** An `on…` handler, called with the socket as `this`, as a browser does. */
type Handler<E extends Event> = ((this: BrowserWebSocket, event: E) => void) | null

/** One socket of a world; the browser's API plus the server's side (`serverSend`, …). */
export interface BrowserWebSocket extends EventTarget {
  readonly url: string
  readonly readyState: 0 | 1 | 2 | 3
  /** The close event the socket ended with, once it did. */
  readonly closeEvent: CloseEventLike | null
  /** The frames the client sent. */
  readonly sent: unknown[]
  onopen: Handler<Event>
  onmessage: Handler<MessageEvent>
  onerror: Handler<Event>
  onclose: Handler<CloseEventLike>
  send(data: unknown): void
  close(code?: number, reason?: string): void
  /** The server accepts the handshake: `open`, a task later. */
  acceptHandshake(): void
  /** The server (or a proxy) refuses the handshake: `error`, then `close` 1006. */
  refuseHandshake(): void
  /** The server sends a frame: `message`, a task later (an open socket only). */
  serverSend(data: string): void
  /** The server closes cleanly (`close` with its code and reason, `wasClean: true`). */
  serverClose(code?: number, reason?: string): void
  /** The connection is lost without a close frame: `error`, then `close` 1006. */
  drop(): void
}

export interface WebSocketWorld {
  /** The constructor to hand to the code under test (`WebSocket: world.WebSocket`). */
  readonly WebSocket: {
    new (url: string): BrowserWebSocket
    readonly CONNECTING: 0
    readonly OPEN: 1
    readonly CLOSING: 2
    readonly CLOSED: 3
  }
  /** Every socket constructed, in order. */
  readonly sockets: BrowserWebSocket[]
  /** The sockets not yet `CLOSED`. */
  open(): BrowserWebSocket[]
}

/** A set of sockets whose handshakes the world decides (see `WebSocketWorldOptions`). */
export function webSocketWorld(options: WebSocketWorldOptions = {}): WebSocketWorld {
  const latencyMs = options.latencyMs ?? 5
  const sockets: BrowserWebSocket[] = []
  const decide = (index: number) =>
    typeof options.handshake === 'function'
      ? options.handshake(index)
      : (options.handshake ?? 'manual')

  /** One task later, as a browser queues every WebSocket event. */
  const task = (run: () => void, delay = 0) => globalThis.setTimeout(run, delay)

  class Socket extends EventTarget implements BrowserWebSocket {
    static readonly CONNECTING = 0 as const
    static readonly OPEN = 1 as const
    static readonly CLOSING = 2 as const
    static readonly CLOSED = 3 as const
    readonly url: string
    readyState: 0 | 1 | 2 | 3 = 0
    closeEvent: CloseEventLike | null = null
    readonly sent: unknown[] = []
    onopen: Handler<Event> = null
    onmessage: Handler<MessageEvent> = null
    onerror: Handler<Event> = null
    onclose: Handler<CloseEventLike> = null
    /** A handshake answer already on its way (`open` or a refusal). */
    private settling = false

    constructor(url: string) {
      super()
      const parsed = new URL(url) // throws a TypeError for no URL at all, as `new URL` does
      if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')
        throw new DOMException(
          `Failed to construct 'WebSocket': The URL's scheme must be either 'ws' or 'wss'. '${parsed.protocol}' is not allowed.`,
          'SyntaxError',
        )
      this.url = parsed.href
      const index = sockets.push(this) - 1
      const plan = decide(index)
      if (plan === 'open') this.acceptHandshake()
      else if (plan === 'refuse') this.refuseHandshake()
      options.onSocket?.(this)
    }

    private fire<E extends Event>(event: E, handler: Handler<E>) {
      handler?.call(this, event)
      this.dispatchEvent(event)
    }

    private fail(delay: number) {
      task(() => {
        if (this.readyState === 3) return
        this.readyState = 3
        this.fire(new Event('error'), this.onerror)
        this.closeEvent = new CloseEventLike({ code: 1006, wasClean: false })
        this.fire(this.closeEvent, this.onclose)
      }, delay)
    }

    send(data: unknown) {
      if (this.readyState === 0)
        throw new DOMException(
          "Failed to execute 'send' on 'WebSocket': Still in CONNECTING state.",
          'InvalidStateError',
        )
      if (this.readyState === 1) this.sent.push(data)
    }

    close(code?: number, reason = '') {
      if (code !== undefined && code !== 1000 && (code < 3000 || code > 4999))
        throw new DOMException(
          `Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. ${code} is neither.`,
          'InvalidAccessError',
        )
      if (this.readyState === 2 || this.readyState === 3) return
      if (this.readyState === 0) {
        // "Fail the WebSocket connection": error, then close 1006.
        this.readyState = 2
        this.settling = true
        this.fail(0)
        return
      }
      this.readyState = 2
      task(() => this.end(code ?? 1005, reason, true))
    }

    private end(code: number, reason: string, wasClean: boolean) {
      if (this.readyState === 3) return
      this.readyState = 3
      this.closeEvent = new CloseEventLike({ code, reason, wasClean })
      this.fire(this.closeEvent, this.onclose)
    }

    acceptHandshake() {
      if (this.settling || this.readyState !== 0) return
      this.settling = true
      task(() => {
        if (this.readyState !== 0) return
        this.readyState = 1
        this.fire(new Event('open'), this.onopen)
      }, latencyMs)
    }

    refuseHandshake() {
      if (this.settling || this.readyState !== 0) return
      this.settling = true
      this.fail(latencyMs)
    }

    serverSend(data: string) {
      if (this.readyState !== 1) return
      task(() => {
        if (this.readyState !== 1) return
        this.fire(new MessageEvent('message', { data }), this.onmessage)
      })
    }

    serverClose(code = 1000, reason = '') {
      if (this.readyState !== 1) return
      this.readyState = 2
      task(() => this.end(code, reason, true))
    }

    drop() {
      if (this.readyState === 3) return
      this.readyState = 2
      this.fail(0)
    }
  }

  return {
    WebSocket: Socket,
    sockets,
    open: () => sockets.filter((socket) => socket.readyState !== 3),
  }
}
