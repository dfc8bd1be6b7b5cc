/**
 * What the other tabs of this origin say about this thread: their posting holds (one per tab),
 * their live turns (followed batch by batch), and asks for the whole turn. Every message is
 * parsed first ([the protocol](../relay.ts)); junk is reported once and changes nothing.
 */
import { withId } from '../../wire/contract/ids'
import type { HistorySnapshot } from '../../wire/contract/snapshot'
import type {
  Command,
  EngineAction,
  EngineConfig,
  EnginePart,
  EngineState,
  Reducer,
  Step,
  StepEvent,
} from '../model'
import { applyTurnEvents, type LiveTurn } from '../fold'
import { parseRelayMessage, RELAY_VERSION, type RelayBody } from '../relay'
import { recordSupersedes } from '../transcript'
import { andThen, isStandIn, setAside, step, wantRead, withBase } from './common'
import { renameWatched, unwatch, watchAs } from './endings'
import { turnOptions } from './ownTurn'
import { adoptRecordedId, executionIdsOf } from './released'
import { assistantOf, takesRecord } from './snapshot'
import { underStop } from './stop'
import { explain } from '../../wire/contract/explain'

type Action<T extends EngineAction['type']> = Extract<EngineAction, { type: T }>

/**
 * The relay part's state, under its own key of the engine state (`relay`), which the engine's
 * steps carry through: absent on a client without a relay, and until another tab says something.
 */
export interface RelayState {
  /**
   * Another tab's live turn followed here: whose, its last batch, since when, a confirming read
   * asked ([decision](../../../../../docs/decisions/posting-hold.md)); `null` when the live view
   * is none of theirs.
   */
  following: {
    tab: string
    executionId: string
    seq: number
    since: number
    /** Reads started when its confirming read was asked for (`null`: not yet): only a later one counts. */
    checked: number | null
  } | null
  /** The execution whose whole turn this tab asked the streaming tab for (asked once). */
  syncAsked: string | null
  /** Other tabs' messages on their way, by tab, with when (scheduler time) ([the hold](../../../../../docs/decisions/posting-hold.md)). */
  holds: Readonly<Record<string, number>>
}

/** The engine state with the relay's part (absent: nothing heard from another tab yet). */
export type RelayingState = EngineState & { readonly relay?: RelayState }

const heardNothing: RelayState = { following: null, syncAsked: null, holds: {} }

/** The relay's part of `state`. */
export const relayOf = (state: EngineState): RelayState =>
  (state as RelayingState).relay ?? heardNothing

/**
 * `state` with the relay's part `changes` made, and the gate's one fact of it in step: another
 * tab's message on its way holds this thread (`EngineState.othersPosting`).
 */
function withRelay(state: EngineState, changes: Partial<RelayState>): EngineState {
  const relay = { ...relayOf(state), ...changes }
  const othersPosting = Object.keys(relay.holds).length > 0
  return { ...state, relay, othersPosting } as RelayingState
}

/**
 * The live view is the turn that tab relays as `executionId` (a stand-in id there may have
 * given way to the recorded id here).
 */
const followsRelayed = (state: EngineState, executionId: string) =>
  relayOf(state).following?.executionId === executionId &&
  state.live !== null &&
  (state.live.executionId === executionId || isStandIn(executionId))

/** This tab follows another tab's turn that runs (relayed, not yet ended). */
function followsRunning(state: EngineState): boolean {
  const { following } = relayOf(state)
  return (
    following !== null &&
    state.live?.ended === false &&
    followsRelayed(state, following.executionId)
  )
}

/** The id this thread goes by between tabs. */
const relayThread = (state: EngineState) =>
  JSON.stringify([state.key.projectId, state.key.agentId, state.key.threadId])

/** A relay command for this thread, stamped with the protocol version and this tab's id. */
const relay = (state: EngineState, body: RelayBody): Command => ({
  type: 'relay',
  message: { ...body, v: RELAY_VERSION, tab: state.tab, thread: relayThread(state) },
})

/** The relay message each of this tab's own outcomes is told by (`told`). */
const kinds: { readonly [type: string]: RelayBody['kind'] } = {
  posting: 'posting',
  'own-turn-began': 'turn',
  'own-turn-streamed': 'events',
}

/** What this tab tells the other tabs of what its step reported (none of it: `undefined`). */
function told(state: EngineState, event: StepEvent): Command | undefined {
  const kind = kinds[event.type]
  if (!kind) return undefined
  const { type: _, ...body } = event
  return relay(state, { ...body, kind } as RelayBody)
}

/**
 * The relay's wrapper: a relay message is the part's to read (`relayReceived`), every other action
 * the inner reducer's (a `tick` after the part's deadlines, `relayDeadlines`); what this tab's own message and turn did (the step's `posting`,
 * `own-turn-began` and `own-turn-streamed` events) is told to the other tabs, after the step's
 * own commands. Without the part, no relay command is ever made.
 */
export const relaying =
  (inner: Reducer): Reducer =>
  (state, action, config) => {
    if (state.disposed) return inner(state, action, config)
    if (action.type === 'relay-received') return relayReceived(state, action, config)
    // The part's deadlines before the engine's own, so that a read they want starts in this step;
    // a record that does not confirm the turn followed drops it before the engine takes the record.
    const done =
      action.type === 'tick'
        ? andThen(relayDeadlines(state, action.at, config), (s) => inner(s, action, config))
        : action.type === 'snapshot'
          ? inner(unconfirmed(state, action), action, config)
          : inner(state, action, config)
    if (!done.events) return done
    let { state: next } = done
    let commands: Command[] | undefined
    for (const event of done.events) {
      // This tab's own turn began, or the session went quiet: it follows no other tab's turn.
      const relay = (next as RelayingState).relay
      if (event.type === 'own-turn-began' && relay?.following)
        next = withRelay(next, { following: null })
      if (event.type === 'went-quiet' && relay) next = withRelay(next, heardNothing)
      const command = told(next, event)
      if (command) (commands ??= [...done.commands]).push(command)
    }
    return next === done.state && !commands
      ? done
      : { ...done, state: next, commands: commands ?? done.commands }
  }

/** The record knows this live turn as running (a stand-in id: it shows some turn running). */
function confirms(snapshot: HistorySnapshot, live: LiveTurn): boolean {
  if (snapshot.activeExecutionId === live.executionId) return true
  if (isStandIn(live.executionId)) return snapshot.activeExecutionId != null
  return assistantOf(snapshot, live.executionId) !== undefined
}

/**
 * Another tab's turn that no read confirmed once `submitTimeoutMs` passed holds nothing: a read
 * started after its check was asked for (`relayDeadlines`) that does not know it as running drops
 * it from the live view (and from the turns watched, where the record has no answer of it).
 */
function unconfirmed(state: EngineState, action: Action<'snapshot'>): EngineState {
  const { live } = state
  const { following } = relayOf(state)
  if (
    !live ||
    !action.fromRead ||
    following?.checked == null ||
    state.reads.count <= following.checked ||
    !followsRunning(state) ||
    !takesRecord(state, action) ||
    confirms(action.snapshot, live)
  )
    return state
  const dropped = withRelay({ ...state, live: null }, { following: null })
  return assistantOf(action.snapshot, live.executionId)
    ? dropped
    : unwatch(dropped, live.executionId)
}

/** The holds less the one of `tab` (a tab's own outcome, or its turn, ends its hold). */
function release(holds: RelayState['holds'], tab: string): RelayState['holds'] {
  if (!Object.hasOwn(holds, tab)) return holds
  return Object.fromEntries(Object.entries(holds).filter(([held]) => held !== tab))
}

export function relayReceived(
  state: EngineState,
  action: Action<'relay-received'>,
  config: EngineConfig,
): Step {
  const parsed = parseRelayMessage(action.data)
  if (parsed.kind === 'invalid')
    return step(state, {
      type: 'warn',
      message: `Ignored a message on the tab relay channel that is not of preview-chat's relay protocol (${parsed.reason}).${explain('relay-ignored')}`,
    })
  const { message } = parsed
  if (message.thread !== relayThread(state) || message.tab === state.tab) return step(state)
  const { holds, following, syncAsked } = relayOf(state)
  switch (message.kind) {
    case 'posting':
      // Held even while this tab posts too: if its own message fails, the other one may still
      // run. Not taken up: the server may still have recorded it (no answer), so read.
      return message.active
        ? step(withRelay(state, { holds: withId(holds, message.tab, action.at) }))
        : step(wantRead(withRelay(state, { holds: release(holds, message.tab) })))
    case 'sync': {
      const { own, live } = state
      if (own?.phase !== 'streaming' || live?.executionId !== message.executionId)
        return step(state)
      return step(
        state,
        relay(state, { kind: 'turn', turn: live, seq: own.batches, after: live.after ?? [] }),
      )
    }
    case 'turn': {
      // That tab's message began its turn: its hold ends, whatever this tab streams.
      const released = withRelay(state, { holds: release(holds, message.tab) })
      // A stand-in id (released n8n) gives way to the recorded id of the same message here too.
      // What that tab's record showed ended when its turn began (a relay may come late).
      const fresh = state.live?.executionId !== message.turn.executionId
      const base = !fresh
        ? (state.live?.after ?? [])
        : isStandIn(message.turn.executionId)
          ? (message.after ?? executionIdsOf(state.recorded))
          : []
      const turn = withBase(
        state.recorded ? adoptRecordedId(message.turn, state.recorded, base) : message.turn,
        base,
      )
      // This tab's own stream wins; and never a turn the record has already caught up with.
      if (state.own || (state.recorded && recordSupersedes(state.recorded, turn)))
        return step(released)
      // The turn followed here under a stand-in id, relayed again under the id its tab learned
      // since: the same turn renamed, never set aside beside itself (R-N8N-STAND-IN-RELAY).
      const renaming = renamedThere(state, message.tab, turn)
      const replacing = state.live?.executionId !== turn.executionId && !renaming
      const watched = renaming
        ? renameWatched(released, renaming.executionId, turn.executionId)
        : released
      return step(
        withRelay(
          {
            ...watchAs(watched, turn.executionId, 'followed'),
            ...(replacing && setAside(state)),
            live: turn,
            liveAfterRead: replacing ? state.reads.count : state.liveAfterRead,
          },
          {
            following: {
              tab: message.tab,
              executionId: turn.executionId,
              seq: message.seq,
              since: action.at,
              checked: null,
            },
            syncAsked: null,
          },
        ),
      )
    }
    case 'events': {
      const released = withRelay(state, { holds: release(holds, message.tab) })
      if (state.own) return step(released)
      const { live } = state
      if (
        live &&
        following &&
        followsRelayed(state, message.executionId) &&
        following.seq === message.seq - 1
      ) {
        const options = turnOptions(config, action.stampedAt)
        const next = live.ended ? live : applyTurnEvents(live, message.events, options)
        const followed = withRelay(
          { ...released, live: underStop(next, state.stop) },
          { following: { ...following, seq: message.seq } },
        )
        // The relayed turn ended: the record says how. With no push channel to say so, read.
        const ended = next.ended && !live.ended && !state.push.connected
        return step(ended ? wantRead(followed) : followed)
      }
      // Joined mid-turn or missed a batch: ask the streaming tab for the whole turn (once).
      if (syncAsked === message.executionId) return step(released)
      return step(
        withRelay(released, { syncAsked: message.executionId }),
        relay(released, { kind: 'sync', executionId: message.executionId }),
      )
    }
  }
}

/**
 * The live turn, when it is the turn `tab` relayed under a stand-in id (released n8n) and `turn`
 * is that turn under the execution id `tab` learned since (its `done`, or its read): the same tab,
 * the same message, still running here. A tab relays only a running turn of its own, in order, so
 * a turn it relays after the one followed here ended is a new one, whatever its text.
 * [R-N8N-STAND-IN-RELAY](../../../../../docs/rules.md#r-n8n-stand-in-relay)
 */
function renamedThere(state: EngineState, tab: string, turn: LiveTurn): LiveTurn | null {
  const { live } = state
  const { following } = relayOf(state)
  if (!live || live.ended || !isStandIn(live.executionId) || isStandIn(turn.executionId))
    return null
  if (following?.tab !== tab || following.executionId !== live.executionId) return null
  const text = live.user?.content[0]
  const relayed = turn.user?.content[0]
  return text?.type === 'text' && relayed?.type === 'text' && text.text === relayed.text
    ? live
    : null
}

/**
 * A tab that said it posted and went quiet (closed, or its server never answered) holds no more
 * after `submitTimeoutMs`; a relayed turn unconfirmed by then is checked by a read.
 */
export function relayDeadlines(state: EngineState, at: number, config: EngineConfig): Step {
  const holds = Object.entries(relayOf(state).holds)
  const kept = holds.filter(([, since]) => at < holdDueAt(since, config))
  let next = state
  if (kept.length < holds.length)
    next = wantRead(withRelay(state, { holds: Object.fromEntries(kept) }))
  const confirm = confirmDueAt(next, config)
  const { following } = relayOf(next)
  if (confirm !== null && at >= confirm && following)
    next = wantRead(withRelay(next, { following: { ...following, checked: next.reads.count } }))
  return step(next)
}

/** When another tab's posting hold expires. */
const holdDueAt = (since: number, config: EngineConfig) => since + config.submitTimeoutMs

/** When a relayed turn that no read confirmed is checked by a read, or `null`. */
function confirmDueAt(state: EngineState, config: EngineConfig): number | null {
  const { following } = relayOf(state)
  return following && following.checked === null && followsRunning(state)
    ? following.since + config.submitTimeoutMs
    : null
}

/** The earliest of this slice's deadlines: the posting holds and the relayed turn's check. */
export function relayDueAt(state: EngineState, config: EngineConfig): number | null {
  // Every step asks (a delta too): no array but the holds' own, empty where no tab holds.
  let next = confirmDueAt(state, config)
  for (const since of Object.values(relayOf(state).holds)) {
    const due = holdDueAt(since, config)
    if (next === null || due < next) next = due
  }
  return next
}

/**
 * The tab relay's part of the engine (`EnginePart`): what the other tabs say, and the deadlines
 * of their holds and relayed turns. Only a client with a relay carries it (`tabRelay()`,
 * `broadcastChannelRelay()`); a tab without one tells the other tabs nothing and follows them by
 * history reads.
 */
export const relayPart: EnginePart = { wrap: relaying, dueAt: relayDueAt }
