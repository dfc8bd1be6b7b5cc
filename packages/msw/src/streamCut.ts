/**
 * Cuts the client's copy of a turn stream after a number of events, as a dropped connection
 * would. Only the copy is cut: the backend's body is cancelled like a real disconnect, and the
 * turn goes on and is recorded ("An accepted preview turn continues when its browser connection
 * closes").
 */

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

/** Wraps an SSE body: forwards whole frames until `afterEvents` events went through, then cuts. */
export function cutAfterEvents(
  body: ReadableStream<Uint8Array>,
  options: CutStreamOptions,
  onCut: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let events = 0
  const mode = options.mode ?? 'close'

  const cut = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    // Cancelling the backend's body is what a real disconnect does; the turn runs on.
    void reader.cancel().catch(() => {})
    onCut()
    if (mode === 'error') controller.error(new TypeError('network error (cut by the MSW scenario)'))
    else controller.close()
  }

  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (options.afterEvents <= 0) {
        // Let the opening comment through first, so the response is a real, started stream.
        controller.enqueue(encoder.encode(':ok\n\n'))
        cut(controller)
      }
    },
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          return
        }
        buffer += decoder.decode(value, { stream: true })
        let boundary = buffer.indexOf('\n\n')
        let forwarded = false
        while (boundary >= 0) {
          const frame = buffer.slice(0, boundary + 2)
          buffer = buffer.slice(boundary + 2)
          controller.enqueue(encoder.encode(frame))
          forwarded = true
          if (frame.startsWith('data:') && ++events >= options.afterEvents) {
            cut(controller)
            return
          }
          boundary = buffer.indexOf('\n\n')
        }
        if (forwarded) return
      }
    },
    cancel() {
      void reader.cancel().catch(() => {})
    },
  })
}
