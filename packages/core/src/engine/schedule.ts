import type { EngineConfig, EnginePart, EngineState } from './model'
import { submitDueAt } from './slices/ownTurn'
import { readDueAt } from './slices/reads'
import { stopDueAt } from './slices/stop'

export { IDLE_READ_RETRIES, LAGGING_RECORD_POLLS } from './slices/reads'

/**
 * When the next history read may start (scheduler time), or `null` for no read: the reads
 * slice's `readDueAt` (one in flight at a time, `minReadIntervalMs` apart, behind this tab's own
 * live stream, never before the server's `Retry-After`).
 */
export const nextRead: (state: EngineState, config: EngineConfig) => number | null = readDueAt

/** The earlier of two times, either of which may be unset (`null`): no array per step. */
const earlier = (a: number | null, b: number | null): number | null =>
  a === null || (b !== null && b < a) ? b : a

/**
 * When the next deadline falls due (scheduler time), or `null`: the minimum of each slice's own
 * `…DueAt` — a posted message waiting for the server's acceptance (`submitDueAt`), a Stop waiting
 * for its execution id or told to wait (`stopDueAt`), and each part's (`EnginePart.dueAt`: the
 * relay's posting holds of other tabs and its relayed turn to confirm; the released platform's
 * derived turn that stays silent, `silentDueAt`). Each deadline handler, run by `tick`, decides with the same function.
 */
export function nextDeadline(
  state: EngineState,
  config: EngineConfig,
  parts: readonly EnginePart[] = [],
): number | null {
  if (state.disposed) return null
  let next = earlier(submitDueAt(state, config), stopDueAt(state, config))
  for (const part of parts) if (part.dueAt) next = earlier(next, part.dueAt(state, config))
  return next
}

/** When the engine must be woken: the next deadline or read, whichever is first. */
export const nextWake = (
  state: EngineState,
  config: EngineConfig,
  parts: readonly EnginePart[] = [],
): number | null => earlier(nextDeadline(state, config, parts), nextRead(state, config))

/**
 * The alarm a step leaves (what `postStep` asks of the runner, `set-alarm`): the time to arm,
 * `null` to clear it, or `undefined` to leave it as armed (`state.wakeAt`). The armed time is never
 * later than the next wake (`nextWake`), and set exactly when there is one [R-ALARM-NEVER-LATE]:
 * a time earlier than the one armed (or one where none was) is armed, and the alarm is cleared
 * once nothing is due; a step that moves the wake later (a delta of this tab's own stream, which
 * holds a wanted read back) arms nothing, so a stream of deltas asks nothing of the runner. The
 * early alarm's `tick` finds nothing due, and its post-step arms the real time (a `tick` leaves
 * `wakeAt` unset: the alarm rang).
 */
export function alarmAfter(
  state: EngineState,
  config: EngineConfig,
  parts: readonly EnginePart[] = [],
): number | null | undefined {
  const armed = state.wakeAt
  const wake = nextWake(state, config, parts)
  if (wake === null) return armed === null ? undefined : null
  return armed === null || wake < armed ? wake : undefined
}
