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

const LF = 10
const COLON = 58
const SPACE = 32

/**
 * An event stream parser as the HTML standard's "Interpreting an event stream" says, reduced to
 * what readers of preview-chat use: the `data` of each dispatched event. Lines end with LF, CR or
 * CRLF (also split across chunks); comments (`:ok`, `:ping`), `event:`, `id:`, `retry:` and unknown
 * fields are read and dropped; several `data:` lines join with LF; an event with no `data` line is
 * not dispatched; a last event the stream ends before its blank line is not either. `feed` takes
 * decoded text (a TextDecoder drops the BOM) and returns the data of the events it completed: one
 * pass over the chunk, and for the usual `data: …\n\n` framing one `slice` per event.
 */
export function createSseParser() {
  /** The start of an incomplete line (text after the last line end). */
  let pending = ''
  /** The data buffer of the event being read: `null` while it has no `data` line. */
  let data: string | null = null

  /** One complete line, `text[start, end)`. */
  function line(text: string, start: number, end: number, out: string[]) {
    if (start === end) {
      if (data !== null) out.push(data)
      data = null
      return
    }
    const colon = text.indexOf(':', start)
    const nameEnd = colon === -1 || colon > end ? end : colon
    // Only `data` is kept; the field name is compared in place (no string made for it).
    if (nameEnd - start !== 4 || !text.startsWith('data', start)) return
    let from = nameEnd === end ? end : nameEnd + 1
    if (from < end && text.charCodeAt(from) === SPACE) from++
    const value = text.slice(from, end)
    data = data === null ? value : `${data}\n${value}`
  }

  return {
    feed(chunk: string): string[] {
      const out: string[] = []
      const text = pending === '' ? chunk : pending + chunk
      const length = text.length
      let at = 0
      let cr = text.indexOf('\r')
      for (;;) {
        if (cr !== -1 && cr < at) cr = text.indexOf('\r', at)
        const lf = text.indexOf('\n', at)
        const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf)
        // A CR last in the chunk may be the first half of a CRLF: wait for the next chunk.
        if (end === -1 || (end === cr && end === length - 1)) break
        // `data: …` followed by its blank line, with nothing buffered: the event at once.
        if (
          data === null &&
          end === lf &&
          text.charCodeAt(lf + 1) === LF &&
          text.charCodeAt(at + 4) === COLON &&
          lf - at >= 5 &&
          text.startsWith('data', at)
        ) {
          out.push(text.slice(text.charCodeAt(at + 5) === SPACE ? at + 6 : at + 5, lf))
          at = lf + 2
          continue
        }
        line(text, at, end, out)
        at = end === cr && text.charCodeAt(end + 1) === LF ? end + 2 : end + 1
      }
      pending = at === 0 ? text : text.slice(at)
      return out
    },
  }
}

/**
 * The one SSE reader of preview-chat (turn streams, the SSE push channel, and every test and kit
 * that reads them). It hands `onMessages` the `data` of the events each network chunk completed,
 * in order, one call per chunk, so that a burst of deltas costs one state change rather than
 * hundreds (see `createSseParser` for the framing). `onMessages` returns `false` to stop (anything
 * else goes on).
 */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  onMessages: (data: string[]) => boolean | undefined,
  signal?: AbortSignal,
): Promise<SseEnd> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const parser = createSseParser()
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
      const messages = parser.feed(decoder.decode(value, { stream: true }))
      if (messages.length === 0) continue
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
