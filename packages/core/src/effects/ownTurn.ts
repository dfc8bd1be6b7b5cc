import type { TurnEvent } from '../wire/contract/events'
import { inBandError, PreviewChatError, toPreviewChatError } from '../wire/contract/errors'
import type { SessionEffects } from './context'
import { readTurnStream, type TurnRequest } from '../wire/transport'

/** The outcome of `submit()` and `resume()`. */
export type SubmitResult =
  /**
   * The server took the turn; it now runs whatever this tab does. `executionId` is `null` when the
   * server began the turn without announcing it (released n8n names it at the end).
   */
  | { outcome: 'accepted'; executionId: string | null }
  /** A turn runs, a submission is under way, or the thread's state is not known yet: nothing was sent. */
  | { outcome: 'busy' }
  /** Not accepted (or not confirmed in time); the draft is kept. `error.code` says why. */
  | { outcome: 'failed'; error: PreviewChatError }

/** Codes of a POST that got no usable answer: the server may have taken the turn anyway. */
const mayHaveBeenTaken = new Set(['network_error', 'server_error', 'invalid_response', 'timeout'])

/**
 * Posts a message (or a resume) and reads its turn stream into the reducer. The stream is closed
 * only by the server, by the session going quiet or disposed, or after the turn's terminal event:
 * never because of what it carries, since on some servers closing it cancels the person's turn.
 */
export function runOwnTurn(
  ctx: SessionEffects,
  request: TurnRequest,
  token: number,
  signal: AbortSignal,
  /** Called once the stream is read to its end (or the POST failed). */
  onEnded: () => void,
): Promise<SubmitResult> {
  return new Promise<SubmitResult>((resolve) => {
    let decided = false
    const decide = (result: SubmitResult) => {
      if (!decided) resolve(result)
      decided = true
    }
    // The other tabs hold their gate until this message's turn begins (relayed as a `turn`) or
    // it is not taken up: refused, failed, cut or timed out.
    ctx.relay({ kind: 'posting', thread: ctx.relayThread, active: true })
    void ctx
      .until((s) => s.own?.token !== token || s.own.phase !== 'posting' || s.own.timedOut)
      .then((s) => {
        const own = s.own?.token === token ? s.own : null
        // A session that went quiet keeps its stream on servers where closing it would cancel
        // the turn: nothing is said then, and the other tabs learn of it from the record.
        if (own?.phase !== 'streaming' && s.active)
          ctx.relay({ kind: 'posting', thread: ctx.relayThread, active: false })
        // The reducer's deadline: no acceptance in time, so the tab recovers and submit() says so.
        if (own?.timedOut && s.error) decide({ outcome: 'failed', error: s.error })
      })
    ctx.transport.openTurn(ctx.key, request, signal).then(
      (body) => readOwnStream(ctx, body, token, signal, decide, onEnded),
      (cause: unknown) => {
        onEnded()
        const error = toPreviewChatError(
          cause,
          'network_error',
          'Sending the message got no answer',
        )
        ctx.dispatch({
          type: 'submit-failed',
          token,
          error,
          recover: mayHaveBeenTaken.has(error.code),
        })
        decide({ outcome: 'failed', error })
      },
    )
  })
}

function readOwnStream(
  ctx: SessionEffects,
  body: ReadableStream<Uint8Array>,
  token: number,
  signal: AbortSignal,
  decide: (result: SubmitResult) => void,
  onEnded: () => void,
): void {
  const onEvents = (events: TurnEvent[]) => {
    const own = ctx.getState().own
    if (own?.token !== token) return // a detached stream: read to its end, shown nowhere
    let rest = events
    if (own.phase === 'posting') {
      const [first] = events
      if (first?.type === 'error') {
        // Refused before it started (e.g. turn_already_running): nothing was recorded.
        const error = inBandError(first)
        ctx.dispatch({ type: 'submit-failed', token, error, recover: false })
        decide({ outcome: 'failed', error })
        return
      }
      const announced = first?.type === 'execution-started' ? first : null
      if (!announced)
        ctx.warn(
          `The turn stream began with "${first?.type}" instead of "execution-started"; ` +
            'following it without an execution id until the server names one.',
        )
      ctx.dispatch({
        type: 'turn-started',
        token,
        executionId: announced?.executionId ?? null,
        sessionId: announced?.sessionId ?? ctx.key.threadId,
        at: ctx.at(),
        stampedAt: ctx.stampedAt(),
      })
      decide({ outcome: 'accepted', executionId: announced?.executionId ?? null })
      const live = ctx.getState().live
      if (live) ctx.relay({ kind: 'turn', thread: ctx.relayThread, turn: live, seq: 0 })
      rest = announced ? events.slice(1) : events
    }
    if (rest.length === 0) return
    const state = ctx.getState()
    const executionId = state.live?.executionId ?? ''
    const seq = (state.own?.batches ?? 0) + 1
    ctx.dispatch({
      type: 'turn-events',
      token,
      events: rest,
      at: ctx.at(),
      stampedAt: ctx.stampedAt(),
    })
    ctx.relay({ kind: 'events', thread: ctx.relayThread, executionId, seq, events: rest })
  }

  void readTurnStream(body, onEvents, signal, ctx.warn).then((end) => {
    onEnded()
    ctx.dispatch({ type: 'stream-ended', token, cut: end.kind !== 'terminal' })
    decide({
      outcome: 'failed',
      error:
        end.kind === 'cut'
          ? end.error
          : new PreviewChatError(
              'disposed',
              'The session was disposed before the server accepted the message.',
            ),
    })
  })
}
