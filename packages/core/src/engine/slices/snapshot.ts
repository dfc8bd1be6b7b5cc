/**
 * A recorded snapshot reaching the session (a read's answer, the app's `setQueryData`, or the
 * cache at mount): what of the live view it replaces, what it settles, and what it teaches.
 * Spec: "Recorded state determines completion."
 */
import { recordedMessageId } from '../../wire/contract/ids'
import type { HistorySnapshot } from '../../wire/contract/snapshot'
import type { EngineAction, EngineConfig, EngineState, Step } from '../model'
import { recordedMessage, recordSupersedes } from '../transcript'
import { andThen, isStandIn, recordedTurn, step, wantRead } from './common'
import { reportEndings, unwatch, watchAs } from './endings'
import { followUp } from './reads'
import { stopAfterRecord } from './stop'

type Action<T extends EngineAction['type']> = Extract<EngineAction, { type: T }>

export const assistantOf = (snapshot: HistorySnapshot, executionId: string) =>
  recordedMessage(snapshot, recordedMessageId(executionId, 'assistant'))

function endedIn(snapshot: HistorySnapshot, executionId: string): boolean {
  const recorded = assistantOf(snapshot, executionId)
  return recorded !== undefined && recorded.executionStatus !== 'running'
}

/**
 * Whether the record a `snapshot` action brings is taken (every one but a read's answer older than
 * what shows: one that began before the app put a newer record in the cache). What a part that
 * learns from each record taken (the released platform's) asks before it learns.
 */
export const takesRecord = (state: EngineState, action: Action<'snapshot'>) =>
  !(
    action.fromRead &&
    state.appRecordAfterRead !== null &&
    state.reads.count <= state.appRecordAfterRead
  )

export function applySnapshot(
  state: EngineState,
  action: Action<'snapshot'>,
  config: EngineConfig,
): Step {
  const { snapshot } = action
  if (!takesRecord(state, action)) {
    // This read began before the app put a newer record here: its answer is older than what shows.
    const ended = { ...state, reads: { ...state.reads, inFlight: false, fetch: null, failures: 0 } }
    // What waits on a record (a Stop, a relayed turn to confirm) waits for a read of its own.
    return step(wantRead(followUp(ended, action.at, action.random, config)))
  }
  const reads = action.fromRead
    ? { ...state.reads, inFlight: false, fetch: null, failures: 0 }
    : state.reads
  const ownStreaming = state.own?.phase === 'streaming'
  // A read started after the last live turn began and ended: the record holds what ended before.
  const afterEnd =
    action.fromRead && state.reads.count > Math.max(state.liveAfterRead, state.liveEndedAfterRead)
  const { live } = state
  const settled = state.settled.filter(
    (turn) => !recordedTurn(snapshot, turn) && !(afterEnd && isStandIn(turn.executionId)),
  )
  const liveEndedInRecord = live !== null && endedIn(snapshot, live.executionId)
  // A read started after this tab saw the turn begin, naming another execution (or none) as
  // active: that execution ended, since the server records a turn before it announces it.
  const endedPerRecord =
    live !== null &&
    !live.ended &&
    action.fromRead &&
    state.reads.count > state.liveAfterRead &&
    !snapshot.derived &&
    !isStandIn(live.executionId) &&
    snapshot.activeExecutionId !== live.executionId
  // Drop the live overlay once the record has caught up with it: while this tab still streams,
  // only when the record shows the turn ended (its own deltas are newer than any batch).
  const dropLive =
    live !== null &&
    (endedPerRecord ||
      ((recordSupersedes(snapshot, live) ||
        // A turn the server never named is in the record under its real id once it ended.
        (afterEnd && live.ended && isStandIn(live.executionId))) &&
        (!ownStreaming || liveEndedInRecord)))
  let next: EngineState = {
    ...state,
    recorded: snapshot,
    reads,
    live: dropLive ? null : live,
    settled,
    // The record shows this tab's turn ended: its stream has nothing more to say.
    own: ownStreaming && (liveEndedInRecord || endedPerRecord) ? null : state.own,
  }
  if (live && dropLive && endedPerRecord && !assistantOf(snapshot, live.executionId))
    next = unwatch(next, live.executionId)
  if (!action.fresh) return step(next)
  next = {
    // Running at this tab's first fresh read: it was under way before this tab looked.
    ...watchAs(next, snapshot.activeExecutionId, state.synced ? 'followed' : 'recovered'),
    // An answer stays hidden until a read started after it shows the record: a read that was on
    // its way when the resume was taken cannot reopen it (nor an app's `setQueryData`).
    answered: action.fromRead
      ? state.answered.filter((answer) => state.reads.count <= answer.afterRead)
      : state.answered,
    recordedHere: false,
    appRecordAfterRead: action.fromRead ? null : state.reads.count,
    synced: true,
    notFound: false,
    cut: false,
    readError: null,
    // The record held, confirmed (a 304, or the same body): "the record I hold is current", which
    // changes nothing an app renders (issue 30).
    lastSyncedAt:
      state.synced && action.unchanged === true && state.lastSyncedAt !== null
        ? state.lastSyncedAt
        : action.stampedAt,
  }
  return andThen(stopAfterRecord(next, action.fromRead), reportEndings, (settled) =>
    step(action.fromRead ? followUp(settled, action.at, action.random, config) : settled),
  )
}
