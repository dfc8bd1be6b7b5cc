/**
 * Stop: which way a Stop goes (by execution id, held for this tab's message, by closing the
 * stream, through a suspension's runs), its retries, and its outcome for every `stop()` call
 * waiting on it. A Stop names only what its tab had as its target, never "the latest" (spec: "A
 * late request cannot cancel a later execution").
 */
import { errorRecord, type ErrorRecord } from '../../wire/contract/errors'
import { activeExecutionId, isSuspended, openSuspensions } from '../derive'
import type { LiveTurn } from '../fold'
import type { EngineAction, EngineConfig, EngineState, Step, StopState } from '../model'
import { isStandIn, reported, settleStop, step, wantRead, withStatus } from './common'
import { explain } from '../../wire/contract/explain'

type Action<T extends EngineAction['type']> = Extract<EngineAction, { type: T }>

/** Tries of a Stop that the server asked to repeat later (429 or 503 with `Retry-After`). */
export const STOP_TRIES = 3

/**
 * A Stop this server gives no route: it has no Stop by execution id (the released n8n 2.41), or
 * the turn has no id yet that such a server would know. What is to stop (`null`: a message on its
 * way), who waits, when it was asked, and the state to stop it from. The engine says it cannot
 * (`noStopById`); the released platform's part, which has a way, stops it by closing the stream.
 */
export interface UnroutedStop {
  state: EngineState
  executionId: string | null
  waiters: readonly number[]
  askedAt: number
}

/** What a client without the released platform's part says of a server with no Stop by id. */
const noStopById = (state: EngineState, waiters: readonly number[]): Step =>
  dropStop(
    state,
    waiters,
    errorRecord(
      'unsupported',
      `This server has no Stop by execution id.${explain('no-stop-by-id')}`,
    ),
  )

/**
 * The Stop that `stop-requested` begins when this server gives it no route, or `null`: with no
 * Stop under way, the server has no Stop by id, or what runs goes by a stand-in id such a server
 * would not know (a message on its way to a server with Stop by id is held for its id instead).
 */
export function unroutedRequest(
  state: EngineState,
  { request, at }: Action<'stop-requested'>,
): UnroutedStop | null {
  const { own } = state
  const posting = own?.phase === 'posting' && !own.timedOut
  const executionId = posting ? null : activeExecutionId(state)
  return state.stop || (state.server.stopsByExecutionId !== false && !isStandIn(executionId))
    ? null
    : { state, executionId, waiters: [request], askedAt: at }
}

/** A Stop that began (one with nothing to stop settles at once): reported, for the parts. */
export const stopBegun = (begun: Step): Step =>
  begun.state.stop ? reported(begun, { type: 'stop-pressed' }) : begun

export function requestStop(state: EngineState, action: Action<'stop-requested'>): Step {
  const { stop } = state
  const { request, at } = action
  if (stop) {
    // Asked already: the call joins the Stop under way and resolves as it does.
    if (stop.kind === 'execution' && stop.accepted)
      return step(state, ...settleStop([request], { cancelRequested: true }))
    if (stop.kind === 'runs' && stop.answered)
      return step(state, ...settleStop([request], { cancelRequested: stop.cancelled }))
    return step({ ...state, stop: { ...stop, waiters: [...stop.waiters, request] } })
  }
  // No route on this server (no Stop by id, or a stand-in id): the engine says it cannot.
  const unrouted = unroutedRequest(state, action)
  if (unrouted) return noStopById(state, unrouted.waiters)
  // A Stop begins here (one with nothing to stop settles at once): reported.
  return stopBegun(startStop(state, [request], at))
}

function startStop(state: EngineState, waiters: readonly number[], at: number): Step {
  const { own } = state
  // This tab's message is on its way: the Stop is that message's, whatever a read shows running
  // (another device's turn, say). (On a server without Stop by id, closing the POST is the Stop:
  // `unroutedRequest`.)
  if (own?.phase === 'posting' && !own.timedOut)
    return step({
      ...state,
      stop: { kind: 'held', token: own.token, askedAt: at, waiters },
      error: null,
    })
  const executionId = activeExecutionId(state)
  return executionId
    ? sendStop(state, executionId, waiters, at)
    : cancelSuspendedRuns(state, waiters)
}

function sendStop(
  state: EngineState,
  executionId: string,
  waiters: readonly number[],
  askedAt: number,
): Step {
  const stop = executionStop(state, executionId, askedAt, false, waiters)
  return step({ ...state, stop, error: null }, { type: 'stop-execution', executionId })
}

/** A Stop by execution id, asked at `askedAt`: only a read started after it may settle it. */
export const executionStop = (
  state: EngineState,
  executionId: string,
  askedAt: number,
  accepted: boolean,
  waiters: readonly number[],
): StopState => ({
  kind: 'execution',
  executionId,
  accepted,
  attempts: 1,
  retryAt: null,
  askedAt,
  afterRead: state.reads.count,
  waiters,
})

/**
 * The Stop under way ends without cancelling anything: every `stop()` waiting on it is told so
 * (with `error`, when it failed), and a read shows what runs.
 */
export function dropStop(
  state: EngineState,
  waiters: readonly number[],
  error?: ErrorRecord,
): Step {
  return step(
    wantRead({ ...state, stop: null, error: error ?? state.error }),
    ...settleStop(waiters, error ? { cancelRequested: false, error } : { cancelRequested: false }),
  )
}

/** A Stop taken: the turn's status waits for the record ("Recorded state determines completion"). */
export function accepted(state: EngineState): EngineState {
  const { live, stop } = state
  // A turn whose end raced the answer: cancelled, as the record will say.
  const settled =
    live?.ended &&
    stop?.kind === 'execution' &&
    live.executionId === stop.executionId &&
    live.assistant.executionStatus === 'running'
      ? withStatus(live, 'cancelled')
      : underStop(live, stop)
  return wantRead({ ...state, live: settled })
}

function cancelSuspendedRuns(state: EngineState, waiters: readonly number[]): Step {
  const runIds = [...new Set(openSuspensions(state).map((s) => s.runId))]
  if (runIds.length === 0) return step(state, ...settleStop(waiters, { cancelRequested: false }))
  return step(
    {
      ...state,
      stop: { kind: 'runs', runIds, answered: false, cancelled: false, waiters },
      error: null,
    },
    { type: 'cancel-runs', runIds },
  )
}

/** The Stop by id that an answer about `executionId` is for; `null`: a late or foreign answer. */
function unansweredStop(state: EngineState, executionId: string) {
  const { stop } = state
  return stop?.kind === 'execution' && stop.executionId === executionId && !stop.accepted
    ? stop
    : null
}

/** The Stop through a suspension's runs that waits for its answer, if any. */
const unansweredRuns = ({ stop }: EngineState) =>
  stop?.kind === 'runs' && !stop.answered ? stop : null

export function stopAnswered(state: EngineState, action: Action<'stop-answered'>): Step {
  const stop = unansweredStop(state, action.executionId)
  if (!stop) return step(state)
  // Not taken: the turn had ended already; how, the record says.
  if (!action.cancelRequested) return dropStop(state, stop.waiters)
  return step(
    accepted({ ...state, stop: { ...stop, accepted: true, waiters: [] } }),
    ...settleStop(stop.waiters, { cancelRequested: true }),
  )
}

/** A Stop by id told to wait (429 or 503 with `Retry-After`) with tries left: sent again later. */
const triesAgain = (
  stop: { attempts: number },
  error: ErrorRecord,
): error is ErrorRecord & { retryAfterMs: number } =>
  error.retryAfterMs !== undefined && stop.attempts < STOP_TRIES

/**
 * A Stop by id the server has no route for (an HTML 404: it stops a turn only when its POST
 * closes): the Stop to make another way, from the state with the server learned to have none;
 * `null` for any other answer.
 */
export function unroutedFailure(
  state: EngineState,
  { executionId, error }: Action<'stop-failed'>,
): UnroutedStop | null {
  const stop = unansweredStop(state, executionId)
  if (!stop || triesAgain(stop, error) || !error.routeMissing) return null
  const server = { ...state.server, stopsByExecutionId: false }
  return { ...stop, state: { ...state, server, stop: null } }
}

export function stopFailed(
  state: EngineState,
  action: Action<'stop-failed'>,
  config: EngineConfig,
): Step {
  const stop = unansweredStop(state, action.executionId)
  const { error } = action
  if (!stop) return step(state)
  if (triesAgain(stop, error)) {
    const retryAt = action.at + Math.min(error.retryAfterMs, config.retry.maxMs)
    return step({ ...state, stop: { ...stop, retryAt } })
  }
  const unrouted = unroutedFailure(state, action)
  return unrouted ? noStopById(unrouted.state, stop.waiters) : dropStop(state, stop.waiters, error)
}

export function runsAnswered(state: EngineState, action: Action<'runs-answered'>): Step {
  const stop = unansweredRuns(state)
  if (!stop) return step(state)
  // The gate stays shut until a read after the answer shows what the runs became.
  return step(
    wantRead({
      ...state,
      stop: { ...stop, answered: true, cancelled: action.cancelled, waiters: [] },
    }),
    ...settleStop(stop.waiters, { cancelRequested: action.cancelled }),
  )
}

export function runsFailed(state: EngineState, action: Action<'runs-failed'>): Step {
  const stop = unansweredRuns(state)
  return stop ? dropStop(state, stop.waiters, action.error) : step(state)
}

/** When a held Stop gives up waiting for its execution id, or a Stop told to wait is due again. */
export function stopDueAt({ stop }: EngineState, config: EngineConfig): number | null {
  if (stop?.kind === 'held') return stop.askedAt + config.stopWaitMs
  return stop?.kind === 'execution' ? stop.retryAt : null
}

/** A held Stop waits `stopWaitMs` for its execution id; a Stop told to wait is sent again. */
export function stopDeadlines(state: EngineState, at: number, config: EngineConfig): Step {
  const due = stopDueAt(state, config)
  const { stop } = state
  if (due === null || at < due || !stop) return step(state)
  if (stop.kind === 'held') return dropStop(state, stop.waiters)
  if (stop.kind === 'execution')
    return step(
      { ...state, stop: { ...stop, retryAt: null, attempts: stop.attempts + 1 } },
      { type: 'stop-execution', executionId: stop.executionId },
    )
  return step(state)
}

/**
 * This tab's message began its turn: a Stop held for it names that execution now (a stand-in's
 * has no route here: the released platform's part takes a Stop held for its stand-in turn out
 * before the turn begins, and stops it its own way).
 */
export function onOwnTurnAnnounced(state: EngineState, token: number, executionId: string): Step {
  const { stop } = state
  if (stop?.kind !== 'held' || stop.token !== token) return step(state)
  const unheld = { ...state, stop: null }
  return isStandIn(executionId)
    ? noStopById(unheld, stop.waiters)
    : sendStop(unheld, executionId, stop.waiters, stop.askedAt)
}

/**
 * This tab's message began a turn without `execution-started`, met by a client without the released
 * platform's part: a Stop held for it cannot name it, nor close its stream (that is the part's), and
 * says so (`noStopById`).
 */
export function onOwnTurnUnannounced(state: EngineState, token: number): Step {
  const { stop } = state
  if (stop?.kind !== 'held' || stop.token !== token) return step(state)
  return noStopById({ ...state, stop: null }, stop.waiters)
}

/** This tab's message was not taken up: a Stop held for it has nothing to stop. */
export function onOwnTurnNotTaken(state: EngineState, token: number): Step {
  const { stop } = state
  if (stop?.kind !== 'held' || stop.token !== token) return step(state)
  // (Its caller has asked for a read already.)
  return dropStop(state, stop.waiters)
}

/**
 * A fresh read settles a Stop: its runs were answered, or its execution is not the active one in
 * a read that started after the Stop named it (an older read may predate the turn).
 */
export function stopAfterRecord(state: EngineState, fromRead: boolean): Step {
  const { stop, recorded } = state
  if (stop?.kind === 'runs' && stop.answered) return step({ ...state, stop: null })
  if (stop?.kind !== 'execution' || recorded?.activeExecutionId === stop.executionId)
    return step(state)
  if (!fromRead || state.reads.count <= stop.afterRead) return step(state)
  return step({ ...state, stop: null }, ...settleStop(stop.waiters, { cancelRequested: false }))
}

/** A turn ended by `done` shows `running` until the record says how ([decision](../../../../../docs/decisions/done-waits-for-the-record.md)). */
export function underStop<T extends LiveTurn | null>(live: T, stop: StopState | null): T {
  if (!live?.ended || live.assistant.executionStatus !== 'success') return live
  if (live.assistant.content.some(isSuspended)) return live
  const stopped =
    stop?.kind === 'execution' && stop.accepted && stop.executionId === live.executionId
  return withStatus(live, stopped ? 'cancelled' : 'running') as T
}
