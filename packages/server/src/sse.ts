import type { Timers } from '@preview-chat/core'
import { platformTimers } from './sleep'

/**
 * One server-sent-events response body, framed per the wire contract ("The turn stream"): the
 * comment `:ok` first, `:ping` every 30 s while idle, one `data: <JSON>` block per event.
 *
 * Writing never throws: once the client has gone (the body was cancelled) or the stream was
 * closed, writes are dropped, because a turn runs on whether anyone listens or not.
 */
export interface SseStream {
  readonly body: ReadableStream<Uint8Array>
  /** Whether the reader cancelled the body (the client left). */
  readonly cancelled: boolean
  /** Whether the reader was dropped for leaving more than `maxQueuedBytes` unread. */
  readonly dropped: boolean
  /** The bytes written that wait for the reader, while the stream is open (0 once dropped). */
  readonly queuedBytes: number
  send(data: unknown): void
  close(): void
}

export const sseHeaders: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=UTF-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
}

/**
 * The bytes a push stream may hold for a reader that does not read (1 MiB, some 5,000 messages)
 * before it is dropped. Push messages carry no transcript (the client answers each with a history
 * read, and reads again when it reconnects), so dropping a slow push client loses nothing.
 */
export const pushQueueLimitBytes = 1024 * 1024

/**
 * The same bound for a turn stream (1 MiB, some 10,000 text deltas): its reader is dropped, the
 * turn goes on and is recorded ("An accepted preview turn continues when its browser connection
 * closes"), and the client recovers the cut stream from history, as after any cut. Without it, a
 * client that never reads made the server hold the whole turn (`/long 100000`: some 9 MB).
 */
export const turnQueueLimitBytes = 1024 * 1024

export interface SseStreamOptions {
  /** Idle time before a `:ping` comment; 30 s by default. */
  pingMs?: number
  /** Called once when the reader cancels the body. */
  onCancel?: () => void
  /**
   * Bytes queued unread past which the stream is dropped: it errors (its queue let go, the
   * connection closed) and `onOverflow` is called. None by default (an in-band answer is a few
   * events); push and turn streams set theirs (`pushQueueLimitBytes`, `turnQueueLimitBytes`).
   * The body's high-water mark is 0 bytes, so `desiredSize` is minus what is queued.
   */
  maxQueuedBytes?: number
  /** Called once when the stream was dropped for holding more than `maxQueuedBytes`. */
  onOverflow?: () => void
  /** The timers of the idle ping (the platform's by default). */
  timers?: Pick<Timers, 'setTimeout' | 'clearTimeout'>
}

export function createSseStream(options: SseStreamOptions = {}): SseStream {
  const pingMs = options.pingMs ?? 30_000
  const encoder = new TextEncoder()
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined
  let open = true
  let cancelled = false
  let dropped = false
  const timers = options.timers ?? platformTimers
  let pingTimer: unknown

  const stopPing = () => {
    if (pingTimer !== undefined) timers.clearTimeout(pingTimer)
    pingTimer = undefined
  }
  const schedulePing = () => {
    stopPing()
    if (!open || pingMs <= 0) return
    pingTimer = timers.setTimeout(() => {
      write(':ping\n\n')
    }, pingMs)
  }
  const write = (text: string) => {
    if (!open || !controller) return
    try {
      controller.enqueue(encoder.encode(text))
    } catch {
      // The body was cancelled or errored underneath us: the client is gone.
      open = false
      stopPing()
      return
    }
    if (overflowed(controller)) return
    schedulePing()
  }
  // A reader that does not keep up is dropped rather than buffered for without limit.
  const overflowed = (c: ReadableStreamDefaultController<Uint8Array>): boolean => {
    const { maxQueuedBytes } = options
    if (maxQueuedBytes === undefined || -(c.desiredSize ?? 0) <= maxQueuedBytes) return false
    open = false
    dropped = true
    stopPing()
    c.error(new Error(`The reader left more than ${maxQueuedBytes} bytes unread.`))
    options.onOverflow?.()
    return true
  }

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c
        write(':ok\n\n')
      },
      cancel() {
        open = false
        cancelled = true
        stopPing()
        options.onCancel?.()
      },
    },
    { highWaterMark: 0, size: (chunk) => chunk.byteLength },
  )

  return {
    body,
    get cancelled() {
      return cancelled
    },
    get dropped() {
      return dropped
    },
    get queuedBytes() {
      return open && controller ? Math.max(0, -(controller.desiredSize ?? 0)) : 0
    },
    send(data) {
      write(`data: ${JSON.stringify(data)}\n\n`)
    },
    close() {
      if (!open) return
      open = false
      stopPing()
      try {
        controller?.close()
      } catch {
        // Already closed or cancelled.
      }
    },
  }
}

export function sseResponse(
  stream: SseStream,
  headers: Readonly<Record<string, string>> = sseHeaders,
): Response {
  return new Response(stream.body, { status: 200, headers })
}

/** A turn stream that carries only these events and ends: an in-band answer. */
export function sseAnswer(...events: unknown[]): Response {
  const stream = createSseStream()
  for (const event of events) stream.send(event)
  stream.close()
  return sseResponse(stream)
}
