/**
 * Cuts the client's copy of a turn stream after a number of events, as a dropped connection
 * would. Only the copy is cut: the backend's body is cancelled like a real disconnect, and the
 * turn goes on and is recorded ("An accepted preview turn continues when its browser connection
 * closes").
 */

import { readSse } from '@preview-chat/core/internal'

/** How a cut stream ends for the client. */
export type CutMode =
  /** The body ends cleanly, without a terminal event (a proxy that closed the connection). */
  | 'close'
  /** Reading the body fails with a network error (the connection dropped). */
  | 'error'

/** When and how to cut the next turn stream. */
export interface CutStreamOptions {
  /**
   * How many events (`data:` blocks, `execution-started` being the first) the client receives
   * before the cut. `0` cuts right after the opening `:ok` comment.
   */
  afterEvents: number
  /** `'close'` by default. */
  mode?: CutMode
}

const encoder = new TextEncoder()

/**
 * Wraps an SSE body: forwards its events (through core's one SSE reader) until `afterEvents`
 * went through, then cuts.
 */
export function cutAfterEvents(
  body: ReadableStream<Uint8Array>,
  options: CutStreamOptions,
  onCut: () => void,
): ReadableStream<Uint8Array> {
  const mode = options.mode ?? 'close'
  const reading = new AbortController()
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // The opening comment goes through first, so the response is a real, started stream.
      controller.enqueue(encoder.encode(':ok\n\n'))
      let events = 0
      const cut = () => {
        // Cancelling the backend's body is what a real disconnect does; the turn runs on.
        onCut()
        if (reading.signal.aborted) return // the client let go first
        if (mode === 'error')
          controller.error(new TypeError('network error (cut by the MSW scenario)'))
        else controller.close()
      }
      if (options.afterEvents <= 0) {
        void body.cancel().catch(() => {})
        cut()
        return
      }
      void readSse(
        body,
        (messages) => {
          for (const data of messages) {
            if (reading.signal.aborted) return false
            controller.enqueue(encoder.encode(`data: ${data}\n\n`))
            if (++events >= options.afterEvents) return false
          }
          return true
        },
        reading.signal,
      ).then((end) => {
        if (reading.signal.aborted) return
        if (end.kind === 'stopped') cut()
        else if (end.kind === 'closed') controller.close()
        else if (end.kind === 'failed') controller.error(end.cause)
      })
    },
    cancel() {
      reading.abort()
    },
  })
}
