import type { SessionEffects } from './context'
import { PreviewChatError, toPreviewChatError } from '../wire/contract/errors'
import { selectActiveExecutionId, selectOpenSuspensions } from '../engine/select'

/** The outcome of `stop()`. `cancelRequested: true` means accepted, not ended: the record says when. */
export interface StopResult {
  cancelRequested: boolean
  error?: PreviewChatError
}

/** Tries of a Stop that the server asked to repeat later (429 or 503 with `Retry-After`). */
const STOP_TRIES = 3

/**
 * Asks the server to stop the running turn, naming the execution known now (never "the latest":
 * spec, "A late request cannot cancel a later execution"). A Stop asked before the execution id is
 * known waits for it (the reducer bounds the wait); a turn that is only suspended is cancelled
 * through its run ("Suspended turns use the existing checkpoint cancellation path").
 */
export async function runStop(ctx: SessionEffects): Promise<StopResult> {
  const state = ctx.getState()
  if (state.stop) {
    // Asked already: repeated calls share the one request, and its outcome is the state's.
    const settled = await ctx.until((s) => s.stop === null || s.stop.accepted)
    if (settled.stop?.accepted) return { cancelRequested: true }
    return settled.error
      ? { cancelRequested: false, error: settled.error }
      : { cancelRequested: false }
  }
  let executionId = selectActiveExecutionId(state)
  // No Stop by id (released n8n), or nothing to name yet a server of that kind would know.
  if (state.server.stopsByExecutionId === false || executionId?.startsWith('unannounced:'))
    return stopByClosing(ctx, executionId)
  if (!executionId && state.own?.phase === 'posting' && !state.own.timedOut) {
    ctx.dispatch({ type: 'stop-requested', executionId: null, at: ctx.at() })
    const known = await ctx.until((s) => s.stop?.executionId !== null)
    if (!known.stop?.executionId) return { cancelRequested: false }
    executionId = known.stop.executionId
  }
  if (!executionId) return cancelSuspendedRuns(ctx)

  ctx.dispatch({ type: 'stop-requested', executionId, at: ctx.at() })
  for (let attempt = 1; ; attempt++) {
    // The record may have shown the execution ended while a retry waited: nothing left to stop.
    if (ctx.getState().stop?.executionId !== executionId) return { cancelRequested: false }
    try {
      const answer = await ctx.transport.stopExecution(ctx.key, executionId)
      ctx.dispatch({ type: 'stop-answered', executionId, ...answer })
      return answer
    } catch (cause) {
      const error = toPreviewChatError(cause, 'network_error', 'Stop got no answer')
      if (error.retryAfterMs !== undefined && attempt < STOP_TRIES) {
        await ctx.sleep(Math.min(error.retryAfterMs, ctx.config.retry.maxMs))
        continue
      }
      ctx.dispatch({ type: 'stop-failed', error })
      // No such route: this server stops a turn when its POST closes (the reducer learnt it).
      if (error.routeMissing) return stopByClosing(ctx, executionId)
      return { cancelRequested: false, error }
    }
  }
}

/**
 * On a server without Stop by execution id, a turn stops when the connection of its POST closes:
 * only the tab holding that stream can stop it. Closing it is the Stop request; the record says
 * when it ended.
 */
function stopByClosing(ctx: SessionEffects, executionId: string | null): StopResult {
  const { own, live } = ctx.getState()
  const named = executionId ?? live?.executionId ?? null
  if (!own || own.timedOut || !ctx.closeOwnStream()) {
    const error = new PreviewChatError(
      'unsupported',
      'This server stops a turn only from the tab that sent it (it has no Stop by execution id). ' +
        'Stop it there, or let it finish.',
    )
    ctx.dispatch({ type: 'stop-failed', error })
    return { cancelRequested: false, error }
  }
  if (named) {
    ctx.dispatch({ type: 'stop-requested', executionId: named, at: ctx.at() })
    ctx.dispatch({ type: 'stop-answered', executionId: named, cancelRequested: true })
  }
  return { cancelRequested: true }
}

async function cancelSuspendedRuns(ctx: SessionEffects): Promise<StopResult> {
  const runIds = [...new Set(selectOpenSuspensions(ctx.getState()).map((s) => s.runId))]
  if (runIds.length === 0) return { cancelRequested: false }
  try {
    const answers = await Promise.all(
      runIds.map((runId) => ctx.transport.cancelRun(ctx.key, runId)),
    )
    ctx.dispatch({ type: 'read-wanted', urgent: false })
    return { cancelRequested: answers.some((answer) => answer.cancelled) }
  } catch (cause) {
    const error = toPreviewChatError(cause, 'network_error', 'Cancelling the suspended run failed')
    ctx.dispatch({ type: 'stop-failed', error })
    return { cancelRequested: false, error }
  }
}
