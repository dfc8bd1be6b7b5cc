import { followsRunning, SILENT_TURN_MAX_AGE_MS } from './derive'
import type { EngineConfig, EngineState } from './model'

export { IDLE_READ_RETRIES, LAGGING_RECORD_POLLS } from './slices/reads'

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
  const { reads, own, stop } = state
  if (!state.active || reads.inFlight) return null
  const due = reads.wanted ? -Infinity : reads.followUpAt
  if (due === null) return null
  const spacing = reads.urgent ? -Infinity : reads.lastStartedAt + config.minReadIntervalMs
  const stopAccepted = stop?.kind === 'execution' && stop.accepted
  const held =
    own && !own.timedOut && !stopAccepted ? own.lastEventAt + config.streamSilenceMs : -Infinity
  return Math.max(due, spacing, held, reads.notBefore)
}

/**
 * When the next deadline falls due (scheduler time), or `null`: a posted message waiting for the
 * server's acceptance, a Stop waiting for its execution id or told to wait (`Retry-After`), other
 * tabs' posting holds, a relayed turn to confirm, a derived turn that stays silent. The reducer's
 * `tick` applies them.
 */
export function nextDeadline(state: EngineState, config: EngineConfig): number | null {
  if (state.disposed) return null
  let next = Infinity
  const due = (at: number) => void (next = Math.min(next, at))
  const { own, stop, relay, silent } = state
  if (own?.phase === 'posting' && !own.timedOut) due(own.since + config.submitTimeoutMs)
  if (stop?.kind === 'held') due(stop.askedAt + config.stopWaitMs)
  if (stop?.kind === 'execution' && stop.retryAt !== null) due(stop.retryAt)
  for (const since of Object.values(state.postingHolds)) due(since + config.submitTimeoutMs)
  if (relay && !relay.checked && followsRunning(state)) due(relay.since + config.submitTimeoutMs)
  if (silent && !silent.expired) due(silent.since + SILENT_TURN_MAX_AGE_MS)
  return next === Infinity ? null : next
}
