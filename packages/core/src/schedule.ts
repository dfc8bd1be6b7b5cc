import type { EngineConfig, EngineState } from './state'

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
  return deadlines.length === 0 ? null : Math.min(...deadlines)
}
