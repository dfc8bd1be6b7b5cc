/**
 * What the other tabs of this origin say about this thread: their posting holds (one per tab),
 * their live turns (followed batch by batch), and asks for the whole turn. Every message is
 * parsed first ([the protocol](../relay.ts)); junk is reported once and changes nothing.
 */
import { withId } from '../../wire/contract/ids'
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
import { followsRelayed, followsRunning } from '../derive'
import { applyTurnEvents, type LiveTurn } from '../fold'
import { parseRelayMessage, RELAY_VERSION, type RelayBody } from '../relay'
import { recordSupersedes } from '../transcript'
import { andThen, isStandIn, setAside, step, wantRead } from './common'
import { renameWatched, watchAs } from './endings'
import { turnOptions } from './ownTurn'
import { adoptRecordedId, executionIdsOf } from './released'
import { underStop } from './stop'
import { explain } from '../../wire/contract/explain'

type Action<T extends EngineAction['type']> = Extract<EngineAction, { type: T }>

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
    // The part's deadlines before the engine's own, so that a read they want starts in this step.
    const done =
      action.type === 'tick'
        ? andThen(relayDeadlines(state, action.at, config), (s) => inner(s, action, config))
        : inner(state, action, config)
    if (!done.events) return done
    let commands: Command[] | undefined
    for (const event of done.events) {
      const command = told(done.state, event)
      if (command) (commands ??= [...done.commands]).push(command)
    }
    return commands ? { ...done, commands } : done
  }

/** The holds less the one of `tab` (a tab's own outcome, or its turn, ends its hold). */
function release(holds: EngineState['postingHolds'], tab: string): EngineState['postingHolds'] {
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
  const holds = state.postingHolds
  switch (message.kind) {
    case 'posting':
      // Held even while this tab posts too: if its own message fails, the other one may still
      // run. Not taken up: the server may still have recorded it (no answer), so read.
      return message.active
        ? step({ ...state, postingHolds: withId(holds, message.tab, action.at) })
        : step(wantRead({ ...state, postingHolds: release(holds, message.tab) }))
    case 'sync': {
      const { own, live } = state
      if (own?.phase !== 'streaming' || live?.executionId !== message.executionId)
        return step(state)
      return step(
        state,
        relay(state, { kind: 'turn', turn: live, seq: own.batches, after: state.standInBase }),
      )
    }
    case 'turn': {
      // That tab's message began its turn: its hold ends, whatever this tab streams.
      const released = { ...state, postingHolds: release(holds, message.tab) }
      // A stand-in id (released n8n) gives way to the recorded id of the same message here too.
      // What that tab's record showed ended when its turn began (a relay may come late).
      const fresh = state.live?.executionId !== message.turn.executionId
      const base = !fresh
        ? state.standInBase
        : isStandIn(message.turn.executionId)
          ? (message.after ?? executionIdsOf(state.recorded))
          : []
      const turn = state.recorded
        ? adoptRecordedId(message.turn, state.recorded, base)
        : message.turn
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
      return step({
        ...watchAs(watched, turn.executionId, 'followed'),
        ...(replacing && setAside(state)),
        live: turn,
        liveAfterRead: replacing ? state.reads.count : state.liveAfterRead,
        standInBase: base,
        relay: {
          tab: message.tab,
          executionId: turn.executionId,
          seq: message.seq,
          since: action.at,
          checked: null,
        },
        syncAsked: null,
      })
    }
    case 'events': {
      const released = { ...state, postingHolds: release(holds, message.tab) }
      if (state.own) return step(released)
      const { relay: following, live } = state
      if (
        live &&
        following &&
        followsRelayed(state, message.executionId) &&
        following.seq === message.seq - 1
      ) {
        const options = turnOptions(config, action.stampedAt)
        const next = live.ended ? live : applyTurnEvents(live, message.events, options)
        const followed = {
          ...released,
          live: underStop(next, state.stop),
          relay: { ...following, seq: message.seq },
        }
        // The relayed turn ended: the record says how. With no push channel to say so, read.
        const ended = next.ended && !live.ended && !state.push.connected
        return step(ended ? wantRead(followed) : followed)
      }
      // Joined mid-turn or missed a batch: ask the streaming tab for the whole turn (once).
      if (state.syncAsked === message.executionId) return step(released)
      return step(
        { ...released, syncAsked: message.executionId },
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
  const { live, relay: following } = state
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
  const holds = Object.entries(state.postingHolds)
  const kept = holds.filter(([, since]) => at < holdDueAt(since, config))
  let next = state
  if (kept.length < holds.length)
    next = wantRead({ ...state, postingHolds: Object.fromEntries(kept) })
  const confirm = confirmDueAt(next, config)
  if (confirm !== null && at >= confirm && next.relay)
    next = wantRead({ ...next, relay: { ...next.relay, checked: next.reads.count } })
  return step(next)
}

/** When another tab's posting hold expires. */
const holdDueAt = (since: number, config: EngineConfig) => since + config.submitTimeoutMs

/** When a relayed turn that no read confirmed is checked by a read, or `null`. */
function confirmDueAt(state: EngineState, config: EngineConfig): number | null {
  const { relay: following } = state
  return following && following.checked === null && followsRunning(state)
    ? following.since + config.submitTimeoutMs
    : null
}

/** The earliest of this slice's deadlines: the posting holds and the relayed turn's check. */
export function relayDueAt(state: EngineState, config: EngineConfig): number | null {
  // Every step asks (a delta too): no array but the holds' own, empty where no tab holds.
  let next = confirmDueAt(state, config)
  for (const since of Object.values(state.postingHolds)) {
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
