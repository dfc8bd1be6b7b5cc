import { backoffDelay } from './backoff'
import { selectActiveExecutionId } from './select'
import type { EngineConfig, EngineState } from './state'

/** Retries of a failed read while nothing runs (while a turn runs, reads retry without end). */
export const IDLE_READ_RETRIES = 3

/**
 * When the next history read may start (scheduler time), or `null` for no read: the one place
 * that decides when a read happens. A pure function of the engine's state; the session's runner
 * starts the read once this time has come, and asks again after every change.
 *
 * - One read in flight at a time; a read asked meanwhile waits behind it.
 * - This tab's own live stream is newer than any recorded batch, so reads asked while it streams
 *   wait for its end, unless a Stop was accepted (completion comes from the record) or the stream
 *   went silent for `streamSilenceMs` (a stalled stream, or a proxy holding it).
 * - Reads start at least `minReadIntervalMs` apart (a `refresh()` skips that), so a burst of
 *   notifications about batches costs two reads; never before the server's `Retry-After`.
 */
export function nextRead(state: EngineState, config: EngineConfig): number | null {
  const { reads, own } = state
  if (!state.active || reads.inFlight) return null
  const due = reads.wanted ? Number.NEGATIVE_INFINITY : reads.followUpAt
  if (due === null) return null
  const spacing = reads.urgent
    ? Number.NEGATIVE_INFINITY
    : reads.lastStartedAt + config.minReadIntervalMs
  const held =
    own && !own.timedOut && !state.stop?.accepted
      ? own.lastEventAt + config.streamSilenceMs
      : Number.NEGATIVE_INFINITY
  return Math.max(due, spacing, held, reads.notBefore)
}

/**
 * When the next deadline falls due (scheduler time), or `null`: a posted message waiting for the
 * server's acceptance, and a Stop waiting for its execution id. The reducer's `tick` applies them.
 */
export function nextDeadline(state: EngineState, config: EngineConfig): number | null {
  const deadlines: number[] = []
  const { own, stop } = state
  if (own?.phase === 'posting' && !own.timedOut) deadlines.push(own.since + config.submitTimeoutMs)
  if (stop?.executionId === null) deadlines.push(stop.askedAt + config.stopWaitMs)
  if (state.relayPosting !== null) deadlines.push(state.relayPosting + config.submitTimeoutMs)
  return deadlines.length === 0 ? null : Math.min(...deadlines)
}

/**
 * What follows a read or a change of the push channel: retry a failed read with bounded backoff
 * while anything is unknown or running (and a few times even when nothing runs, so a passing fault
 * leaves no stale `readError`); poll while an execution runs and no push channel is connected;
 * and poll while the record lags behind a turn this tab saw end, since the notification of its
 * last batch may already have been spent on an earlier read.
 */
export function followUp(state: EngineState, at: number, random: number, config: EngineConfig) {
  const { reads } = state
  const running = selectActiveExecutionId(state) !== null || state.stop !== null
  const recordLags = state.live?.ended === true || state.settled.length > 0
  const unknown = state.cut || !state.synced
  const jitter = () => random
  // A 404 that says the thread is not there is an answer; any other failure is retried.
  if (state.readError && !(state.readError.code === 'not_found' && state.notFound)) {
    if (running || recordLags || unknown || reads.failures <= IDLE_READ_RETRIES) {
      const delay = backoffDelay(
        reads.failures - 1,
        config.retry.baseMs,
        config.retry.maxMs,
        jitter,
      )
      return { ...state, reads: { ...reads, followUpAt: Math.max(at + delay, reads.notBefore) } }
    }
    return { ...state, reads: { ...reads, followUpAt: null } }
  }
  if (recordLags || (running && !state.push.connected)) {
    const delay = backoffDelay(reads.polls, config.poll.baseMs, config.poll.maxMs, jitter)
    return { ...state, reads: { ...reads, polls: reads.polls + 1, followUpAt: at + delay } }
  }
  // Nothing to poll for. The poll backoff starts afresh only once nothing runs.
  const polls = running ? reads.polls : 0
  return { ...state, reads: { ...reads, polls, followUpAt: null } }
}
