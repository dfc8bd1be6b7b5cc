/**
 * The released platform's part of the engine (`EnginePart`): what only a server of the released
 * n8n 2.41 asks of a client, which announces no turn (`execution-started`), records no status on
 * a person's message nor the active execution (`derived` snapshots), has no Stop by execution id
 * and cancels a turn whose POST closes. `createPreviewChatClient` carries it
 * (`releasedPlatform()`); a client for the spec's servers only leaves it out, and then reads such
 * a turn's stream to its end without showing it, and says which option shows it.
 *
 * It takes the engine's own handlers with its seams filled in: a turn begun without a name goes
 * by a stand-in id (`standInId`) until `done` or a record names it; a record names such turns and
 * times a derived turn with no output yet (`silent`); a Stop with no route closes the stream.
 */
import { errorRecord } from '../../wire/contract/errors'
import { explain } from '../../wire/contract/explain'
import type { HistorySnapshot } from '../../wire/contract/snapshot'
import { isStandIn } from '../derive'
import type { LiveTurn } from '../fold'
import type { EngineAction, EnginePart, EngineState, OwnTurn, Reducer, Step } from '../model'
import { andThen, learn, renamed, settleStop, step, wantRead } from './common'
import { renameWatched } from './endings'
import { beginsUnannounced, startOwnTurn } from './ownTurn'
import { assistantOf, takesRecord } from './snapshot'
import {
  accepted,
  dropStop,
  executionStop,
  stopBegun,
  unroutedFailure,
  unroutedRequest,
  type UnroutedStop,
} from './stop'

/** The id a turn goes by until the server names it ([decision](../../../../../docs/decisions/stand-in-ids.md)). */
export const standInId = (token: number) => `unannounced:${token}`

/**
 * How long a derived active execution (released n8n: a person's message with no answer yet) counts
 * as running without any output, measured on this tab's clock from when it first saw it. A turn
 * cancelled before its first output leaves no assistant message at all; past this age, such a
 * message no longer blocks the gate.
 */
export const SILENT_TURN_MAX_AGE_MS = 120_000

/** A derived active execution with no output yet, aged on this tab's own clock. */
export interface SilentTurn {
  executionId: string
  since: number
  expired: boolean
}

/**
 * The released platform part's state, under its own key of the engine state (`released`), which
 * the engine's steps carry through: absent on a client without the part, and until a record.
 */
export interface ReleasedState {
  /** A derived active execution with no output yet (`null`: none). */
  silent: SilentTurn | null
}

/** The engine state with the released platform's part. */
export type ReleasingState = EngineState & { readonly released?: ReleasedState }

/** The silent turn this part times, or `null`. */
export const silentOf = (state: EngineState): SilentTurn | null =>
  (state as ReleasingState).released?.silent ?? null

/** `state` with its silent turn, and the engine told which execution it no longer counts as running. */
const withSilent = (state: EngineState, silent: SilentTurn | null): EngineState =>
  silent === silentOf(state)
    ? state
    : ({
        ...state,
        released: { silent },
        presumedEnded: silent?.expired ? silent.executionId : null,
      } as ReleasingState)

/** When a derived turn's silence stops holding the gate (this tab's clock), or `null`. */
export function silentDueAt(state: EngineState): number | null {
  const silent = silentOf(state)
  return silent && !silent.expired ? silent.since + SILENT_TURN_MAX_AGE_MS : null
}

/** A derived turn silent for `SILENT_TURN_MAX_AGE_MS` on this tab's clock no longer holds the gate. */
function silentDeadline(state: EngineState, at: number): Step {
  const due = silentDueAt(state)
  const silent = silentOf(state)
  if (due === null || at < due || !silent) return step(state)
  return step(wantRead(withSilent(state, { ...silent, expired: true })))
}

/**
 * A derived active execution with no output yet, timed on this tab's own clock from when it
 * first saw it: no decision compares this machine's clock with a server's.
 */
function silentTurn(state: EngineState, snapshot: HistorySnapshot, at: number): SilentTurn | null {
  const id = snapshot.derived ? snapshot.activeExecutionId : null
  if (!id || assistantOf(snapshot, id)) return null
  const silent = silentOf(state)
  const known = silent?.executionId === id ? silent : null
  if (!known) return { executionId: id, since: at, expired: false }
  const expired = known.expired || at >= known.since + SILENT_TURN_MAX_AGE_MS
  return expired === known.expired ? known : { ...known, expired }
}

/**
 * A turn whose stream never named it (cut, or still running) in a record: the record's last
 * message with the person's text is this turn's, whose id the live view then takes.
 */
export function adoptRecordedId(
  turn: LiveTurn,
  snapshot: HistorySnapshot,
  /** Executions recorded as ended before this turn began: an earlier turn with the same text. */
  base: readonly string[] = turn.after ?? [],
): LiveTurn {
  const text = turn.user?.content[0]
  if (!isStandIn(turn.executionId) || text?.type !== 'text') return turn
  const recorded = snapshot.messages.findLast(
    (message) =>
      message.role === 'user' &&
      message.content.length === 1 &&
      message.content[0]?.type === 'text' &&
      message.content[0].text === text.text &&
      !base.includes(message.executionId),
  )
  return recorded ? renamed(turn, recorded.executionId) : turn
}

/** The executions a record shows ended: a stand-in turn that begins now is none of them. */
export const executionIdsOf = (snapshot: HistorySnapshot | null): string[] =>
  snapshot
    ? [
        ...new Set(
          snapshot.messages
            .filter((message) => message.executionStatus !== 'running')
            .map((message) => message.executionId),
        ),
      ]
    : []

/**
 * What a record teaches before the engine applies it: the live turn and each turn set aside under
 * a stand-in id take the id the record gives their message (a turn set aside by what had ended
 * when it began: the record's message is then this turn, shown once), and a Stop of such a turn
 * names it so too; a derived record times its silent turn and shows the server's kind.
 */
function nameFromRecord(state: EngineState, snapshot: HistorySnapshot, at: number): EngineState {
  const live = state.live && adoptRecordedId(state.live, snapshot)
  const settled = state.settled.map((turn) => adoptRecordedId(turn, snapshot))
  const { stop } = state
  let next = withSilent(
    {
      ...state,
      live,
      settled,
      stop:
        stop?.kind === 'execution' && live && stop.executionId === state.live?.executionId
          ? { ...stop, executionId: live.executionId }
          : stop,
      server: snapshot.derived ? learn(state.server, false) : state.server,
    },
    silentTurn(state, snapshot, at),
  )
  if (state.live && live) next = renameWatched(next, state.live.executionId, live.executionId)
  for (const [i, turn] of state.settled.entries())
    next = renameWatched(next, turn.executionId, settled[i]?.executionId ?? turn.executionId)
  return next
}

/**
 * No Stop by id: the tab holding the turn's POST stream stops it by closing that
 * ([decision](../../../../../docs/decisions/stop-by-closing.md)).
 */
function stopByClosing({ state, executionId, waiters, askedAt }: UnroutedStop): Step {
  const { own } = state
  if (!own || own.timedOut || !state.streams.includes(own.token))
    return dropStop(
      state,
      waiters,
      errorRecord(
        'unsupported',
        'This server stops a turn only from the tab that sent it (it has no Stop by execution id). ' +
          `Stop it there, or let it finish.${explain('stop-elsewhere')}`,
      ),
    )
  // What this tab shows running: its own turn's execution, or nothing yet (a POST on its way).
  const stop = executionId && executionStop(state, executionId, askedAt, true, [])
  return step(
    stop ? accepted({ ...state, stop, error: null }) : { ...state, stop: null, error: null },
    { type: 'close-stream', token: own.token },
    ...settleStop(waiters, { cancelRequested: true }),
  )
}

/**
 * This tab's message began its turn without `execution-started`: its live view goes by a stand-in
 * id, with the executions the record showed ended then (what a later record names it by), and a
 * Stop held for it closes the stream — taken out before the engine begins the turn (which has no
 * route for it), done after.
 */
function standInTurn(
  state: EngineState,
  own: OwnTurn,
  action: Extract<EngineAction, { type: 'turn-events' }>,
): Step {
  const executionId = standInId(own.token)
  const { stop } = state
  const held = stop?.kind === 'held' && stop.token === own.token ? stop : null
  const started = startOwnTurn(
    held ? { ...state, stop: null } : state,
    own,
    action,
    executionId,
    undefined,
    executionIdsOf(state.recorded),
  )
  started.commands.unshift({
    type: 'warn',
    message:
      `The turn stream began with "${action.events[0]?.type}" instead of "execution-started"; ` +
      `following it without an execution id until the server names one.${explain('no-execution-started')}`,
  })
  return held ? andThen(started, (s) => stopByClosing({ ...held, state: s, executionId })) : started
}

/**
 * The released platform's wrapper. A record, whichever way it comes (the cache's at `mounted`, a
 * read's, the app's), teaches the part before the engine takes it (`nameFromRecord`): wrapping.
 * A silent turn's deadline is done before the engine's own (`tick`). What the engine has no way
 * for, asked by its pure routing questions, the part does its own way before (or instead of) the
 * engine's step: a turn the server did not announce begins under a stand-in id, and the engine
 * then streams its events (`beginsUnannounced`); a Stop with no route closes the stream
 * (`unroutedRequest`, `unroutedFailure`). The part is listed first (next to the engine,
 * `everyPart`, `createPreviewChatClient`), so the parts listed after it see these steps as any
 * other.
 */
const releasing =
  (inner: Reducer): Reducer =>
  (state, action, config) => {
    if (state.disposed) return inner(state, action, config)
    switch (action.type) {
      case 'mounted':
        return inner(
          action.cached.kind === 'snapshot'
            ? nameFromRecord(state, action.cached.snapshot, action.at)
            : state,
          action,
          config,
        )
      case 'snapshot':
        return inner(
          takesRecord(state, action) ? nameFromRecord(state, action.snapshot, action.at) : state,
          action,
          config,
        )
      case 'tick':
        return andThen(silentDeadline(state, action.at), (s) => inner(s, action, config))
      case 'turn-events': {
        const { own } = state
        if (!own || !beginsUnannounced(state, action)) break
        const started = standInTurn(state, own, action)
        return action.events.length === 0
          ? started
          : andThen(started, (s) => inner(s, action, config))
      }
      case 'stop-requested': {
        const unrouted = unroutedRequest(state, action)
        if (unrouted) return stopBegun(stopByClosing(unrouted))
        break
      }
      case 'stop-failed': {
        const unrouted = unroutedFailure(state, action)
        if (unrouted) return stopByClosing(unrouted)
        break
      }
    }
    return inner(state, action, config)
  }

/**
 * The released platform's part (`releasedPlatform()` brings it, with the snapshot's completion):
 * its wrapper, and the deadline of a derived turn that stays silent.
 */
export const releasedPart: EnginePart = { wrap: releasing, dueAt: silentDueAt }
