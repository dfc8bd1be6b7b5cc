import { PreviewChatError } from '@preview-chat/core'
import { isTerminalEvent, type TurnEvent } from '@preview-chat/core/contract'
import { parseTurnEvent } from './events'
import { readSse } from './sse'

/** How a turn stream ended. */
export type TurnStreamEnd =
  | { kind: 'terminal' }
  /** Closed or failed before a terminal event: recover from history, never send again. */
  | { kind: 'cut'; error: PreviewChatError }
  /** The reader was cancelled (the session went quiet or was disposed). */
  | { kind: 'aborted' }

/**
 * Reads an SSE turn stream, calling `onEvents` with the contract events of each network chunk, in
 * order (one call per chunk, so that a burst of deltas costs one state change, not hundreds). It
 * stops after the turn's terminal event. Unknown and malformed events are skipped and reported to
 * `warn`: the stream is never closed for what it carries (on some servers that cancels the turn),
 * and the record corrects what was skipped.
 */
export async function readTurnStream(
  body: ReadableStream<Uint8Array>,
  onEvents: (events: TurnEvent[]) => void,
  signal: AbortSignal,
  warn: (message: string) => void = () => {},
): Promise<TurnStreamEnd> {
  let ended = false
  const end = await readSse(
    body,
    (messages) => {
      const events: TurnEvent[] = []
      for (const data of messages) {
        const parsed = parseTurnEvent(data)
        if (parsed.kind === 'ignored')
          warn(`Skipped turn stream events of unknown type "${parsed.type}".`)
        else if (parsed.kind === 'invalid')
          warn(`Skipped a turn stream event: ${parsed.error.message}`)
        else {
          events.push(parsed.event)
          if (isTerminalEvent(parsed.event)) {
            ended = true
            break
          }
        }
      }
      if (events.length > 0) onEvents(events)
      // The turn is over: nothing the server sends after its terminal event matters.
      return !ended
    },
    signal,
  )
  if (end.kind === 'aborted') return end
  if (ended) return { kind: 'terminal' }
  return {
    kind: 'cut',
    error: new PreviewChatError(
      'stream_cut',
      end.kind === 'failed'
        ? `The turn stream failed (${describe(end.cause)}); recovering it from history.`
        : 'The turn stream closed before the turn ended; recovering it from history.',
      end.kind === 'failed' ? { cause: end.cause } : {},
    ),
  }
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause)
}
