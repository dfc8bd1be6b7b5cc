import { silentDueAt } from './derive'
import type { Due, EngineConfig, EnginePart, EngineState, StateInput } from './model'
import { submitDue } from './slices/ownTurn'
import { readDue, readDueAt } from './slices/reads'
import { stopDue } from './slices/stop'

export { IDLE_READ_RETRIES, LAGGING_RECORD_POLLS } from './slices/reads'

/**
 * When the next history read may start (scheduler time), or `null` for no read: the reads
 * slice's `readDueAt` (one in flight at a time, `minReadIntervalMs` apart, behind this tab's own
 * live stream, never before the server's `Retry-After`).
 */
export const nextRead: (state: EngineState, config: EngineConfig) => number | null = readDueAt

/** `silentDueAt` and the state it reads. */
const silentDue: Due = { dueAt: (state) => silentDueAt(state.silent), dueInputs: ['silent'] }

/**
 * The engine's own due times, each with the state it reads: the deadlines of `nextDeadline`, and
 * the read's (`nextRead`). A part's come from the part (`EnginePart.dueAt`, `dueInputs`).
 */
export const engineDues: readonly Due[] = [submitDue, stopDue, silentDue, readDue]

/** The earlier of two times, either of which may be unset (`null`). */
const earlier = (a: number | null, b: number | null): number | null =>
  a === null || (b !== null && b < a) ? b : a

/**
 * The earliest time `dues` give in `state` (`null`: none); given `before`, of those only whose
 * inputs a step from `before` changed (`undefined`: none of them).
 */
function earliestDue(
  dues: readonly Pick<EnginePart, 'dueAt' | 'dueInputs'>[],
  state: EngineState,
  config: EngineConfig,
  before?: EngineState,
): number | null | undefined {
  let next: number | null | undefined
  for (const { dueAt, dueInputs } of dues)
    if (dueAt && (!before || inputsChanged(dueInputs, before, state)))
      next = earlier(next ?? null, dueAt(state, config))
  return next
}

/**
 * When the next deadline falls due (scheduler time), or `null`: the minimum of each slice's own
 * `…DueAt` — a posted message waiting for the server's acceptance (`submitDueAt`), a Stop waiting
 * for its execution id or told to wait (`stopDueAt`), a derived turn that stays silent
 * (`silentDueAt`), and each part's (`EnginePart.dueAt`: the relay's posting holds of other tabs and
 * its relayed turn to confirm). Each deadline handler, run by `tick`, decides with the same function.
 */
export const nextDeadline = (
  state: EngineState,
  config: EngineConfig,
  parts: readonly EnginePart[] = [],
): number | null =>
  state.disposed
    ? null
    : (earliestDue([submitDue, stopDue, silentDue, ...parts], state, config) ?? null)

/** When the engine must be woken: the next deadline or read, whichever is first. */
export const nextWake = (
  state: EngineState,
  config: EngineConfig,
  parts: readonly EnginePart[] = [],
): number | null => earlier(nextDeadline(state, config, parts), nextRead(state, config))

/**
 * Whether a step changed any of `inputs` (by reference) from `before` to `after`: a field of the
 * state, or one field of the object there (`undefined` while it is `null`). Inputs not declared
 * (`undefined`: a part that says nothing of what its `dueAt` reads) always changed.
 */
export function inputsChanged(
  inputs: readonly StateInput[] | undefined,
  before: EngineState,
  after: EngineState,
): boolean {
  if (!inputs) return true
  for (const input of inputs)
    if (
      typeof input === 'string'
        ? before[input] !== after[input]
        : (before[input[0]] as Record<PropertyKey, unknown> | null)?.[input[1]] !==
          (after[input[0]] as Record<PropertyKey, unknown> | null)?.[input[1]]
    )
      return true
  return false
}

/**
 * The alarm a step leaves (what `postStep` asks of the runner, `set-alarm`): the time to arm,
 * `null` to clear it, or `undefined` to leave it as armed (`after.wakeAt`). It keeps, after every
 * step, the armed time no later than the next wake (`nextWake`), and armed exactly when there is
 * one [R-ALARM-NEVER-LATE]:
 *
 * - It arms only a time earlier than the one armed (or one where none was), and clears the alarm
 *   once nothing is due: a step that moves the wake later (a delta of this tab's own stream,
 *   which holds a wanted read back) arms nothing. The early alarm's `tick` finds nothing due,
 *   and its post-step arms the real time (a `tick` leaves `wakeAt` unset: the alarm rang).
 * - It computes again only the due times whose inputs the step changed (`Due.dueInputs`,
 *   `EnginePart.dueInputs`; `config` is the same at every step of a session): every other one is
 *   as it was, so no earlier than the alarm armed. Only when each of those it computed is unset
 *   (a deadline went) are the others computed too: whether any is left decides between keeping
 *   the alarm and clearing it.
 *
 * After a `tick` (or any step that changed `wakeAt` or disposed the session) every due time is
 * computed, and the alarm armed is the next wake itself.
 */
export function alarmAfter(
  before: EngineState,
  after: EngineState,
  config: EngineConfig,
  parts: readonly EnginePart[] = [],
): number | null | undefined {
  const armed = after.wakeAt
  let wake: number | null | undefined
  if (armed !== before.wakeAt || after.disposed !== before.disposed)
    wake = nextWake(after, config, parts)
  else {
    const engine = earliestDue(engineDues, after, config, before)
    const part = earliestDue(parts, after, config, before)
    if (engine === undefined && part === undefined) return undefined
    // Earlier than the alarm, it is the next wake itself (no other due time is earlier).
    wake = earlier(engine ?? null, part ?? null)
    if (wake === null && armed !== null) wake = nextWake(after, config, parts)
  }
  if (wake === null) return armed === null ? undefined : null
  return armed === null || wake < armed ? wake : undefined
}
