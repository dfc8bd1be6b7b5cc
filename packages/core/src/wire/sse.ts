import { createParser } from 'eventsource-parser'

/** How reading an SSE body ended. */
export type SseEnd =
  /** The server closed the body. */
  | { kind: 'closed' }
  /** `onMessages` asked to stop; the body was cancelled. */
  | { kind: 'stopped' }
  /** The body failed while being read (a dropped connection). */
  | { kind: 'failed'; cause: unknown }
  /** `signal` aborted the read; the body was cancelled. */
  | { kind: 'aborted' }

/**
 * The one SSE reader of preview-chat (turn streams, the SSE push channel, and every test and kit
 * that reads them): the body's bytes, decoded, through eventsource-parser (the event stream
 * format as the HTML standard says: LF, CR and CRLF line ends, comments, `event:`/`id:`/`retry:`
 * fields, multi-line data). It hands `onMessages` the `data` of the events each network chunk
 * completed, in order, one call per chunk, so that a burst of deltas costs one state change (and,
 * for turn streams, one `JSON.parse`) rather than hundreds. `onMessages` returns `false` to stop
 * (anything else goes on).
 */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  onMessages: (data: string[]) => boolean | undefined,
  signal?: AbortSignal,
): Promise<SseEnd> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let completed: string[] = []
  const parser = createParser({ onEvent: (event) => void completed.push(event.data) })
  const cancel = () => void reader.cancel().catch(() => {})
  if (signal?.aborted) {
    cancel()
    return { kind: 'aborted' }
  }
  signal?.addEventListener('abort', cancel, { once: true })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (signal?.aborted) return { kind: 'aborted' }
      if (done) return { kind: 'closed' }
      parser.feed(decoder.decode(value, { stream: true }))
      if (completed.length === 0) continue
      const messages = completed
      completed = []
      if (onMessages(messages) === false) {
        cancel()
        return { kind: 'stopped' }
      }
    }
  } catch (cause) {
    return signal?.aborted ? { kind: 'aborted' } : { kind: 'failed', cause }
  } finally {
    signal?.removeEventListener('abort', cancel)
  }
}
