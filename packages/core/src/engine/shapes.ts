/**
 * The engine's actions, state and config as JSON shapes: what `parseTrace` checks a trace against
 * before any of it reaches the reducer (a newer build's trace, a hand edit). Each table is typed
 * against the model — a key per action type, per required field, per state field — so an action
 * or a field added there and not here fails the typecheck: the set of action types has this one
 * source (`ACTION_TYPES`), not a second hand-kept list. A part's actions and its key of the state
 * are in its own table beside it (`queue/shapes.ts`, `slices/relayShapes.ts`,
 * `slices/releasedShapes.ts`); this file composes them and names none of their fields. Every level is checked, with the wire's own
 * shapes where a value came from the wire (a snapshot, a turn event, a push message, a live turn,
 * the stored queue): no trace that passes can make the reducer throw a raw `TypeError`.
 */
import {
  array,
  boolean,
  literal,
  nullable,
  number,
  object,
  optional,
  picklist,
  record,
  string,
  variant,
  type Schema,
} from '../wire/contract/schema'
import { pushSchema } from '../wire/contract/push'
import { completedSchema } from '../wire/contract/snapshot'
import type {
  BaseAction,
  EngineAction,
  EngineConfig,
  EngineState,
  OwnTurn,
  ReadState,
  ServerTraits,
} from './model'
import { queueShapes } from './queue/shapes'
import { liveTurn, turnEvent } from './relay'
import { anError, anything, strings, type ActionFields, type EveryField } from './shapeKit'
import { relayShapes } from './slices/relayShapes'
import { releasedShapes } from './slices/releasedShapes'

/** A snapshot the engine keeps (`recorded`) or is given (`snapshot`, `mounted`): the wire's. */
const aSnapshot = completedSchema as Schema<unknown>
const events = array(turnEvent)
const cached = variant(
  {
    none: object({ kind: literal('none') }),
    invalid: object({ kind: literal('invalid'), message: string }),
    snapshot: object({ kind: literal('snapshot'), snapshot: aSnapshot, keptHere: boolean }),
  },
  'kind',
)
const waiters = array(number)
const stopState = variant(
  {
    held: object({ kind: literal('held'), token: number, askedAt: number, waiters }),
    execution: object({
      kind: literal('execution'),
      executionId: string,
      accepted: boolean,
      attempts: number,
      retryAt: nullable(number),
      askedAt: number,
      afterRead: number,
      waiters,
    }),
    runs: object({
      kind: literal('runs'),
      runIds: array(string),
      answered: boolean,
      cancelled: boolean,
      waiters,
    }),
  },
  'kind',
)

const streamEnd = variant(
  {
    terminal: object({ kind: literal('terminal') }),
    cut: object({ kind: literal('cut'), error: anError }),
    aborted: object({ kind: literal('aborted') }),
  },
  'kind',
)

/** The fields each action type of the engine's own carries, by type. */
const baseActionFields: ActionFields<BaseAction> = {
  mounted: { cached, at: number, stampedAt: number, random: number },
  activated: { at: number, pushConnected: boolean },
  deactivated: {},
  disposed: {},
  tick: { at: number },
  'draft-changed': { draft: string },
  'submit-requested': { request: number, text: optional(string), messageId: string, at: number },
  'resume-requested': {
    request: number,
    runId: string,
    toolCallId: string,
    resumeData: anything,
    at: number,
  },
  'turn-opened': { token: number, capabilities: strings },
  'post-failed': { token: number, error: anError },
  'turn-events': { token: number, events, at: number, stampedAt: number },
  'stream-ended': { token: number, end: streamEnd },
  'read-wanted': { urgent: boolean },
  'prefetch-requested': { at: number },
  'listener-threw': { listener: picklist(['state', 'turn-end']), message: string },
  'push-message': { message: pushSchema },
  'read-started': { at: number, fetch: number },
  snapshot: {
    snapshot: aSnapshot,
    fresh: boolean,
    fromRead: boolean,
    at: number,
    stampedAt: number,
    random: number,
  },
  'read-failed': { error: anError, at: number, random: number },
  'read-cancelled': { fetch: nullable(number) },
  'push-changed': { connected: boolean, at: number, random: number },
  'stop-requested': { request: number, at: number },
  'stop-answered': { executionId: string, cancelRequested: boolean },
  'stop-failed': { executionId: string, error: anError, at: number },
  'runs-answered': { cancelled: boolean },
  'runs-failed': { error: anError },
  'error-cleared': {},
  'capabilities-heard': { capabilities: strings },
}

/**
 * Every action's fields, by type: the engine's own, then each part's from the part's own table
 * (`relayShapes`, `queueShapes`; the released part takes no action of its own).
 */
const actionFields: ActionFields<EngineAction> = {
  ...baseActionFields,
  ...relayShapes.actions,
  ...queueShapes.actions,
}

/** Every action type this engine takes (its parts' too): the keys of the table above. */
export const ACTION_TYPES: readonly EngineAction['type'][] = Object.keys(
  actionFields,
) as EngineAction['type'][]

/** The schema of one action of each type, its fields checked (unknown fields are let be). */
export const actionSchemas = Object.fromEntries(
  Object.entries(actionFields).map(([type, fields]) => [type, object(fields)]),
) as Record<EngineAction['type'], Schema<unknown>>

const readsFields: EveryField<ReadState> = {
  inFlight: boolean,
  fetch: nullable(number),
  waiters: array(number),
  count: number,
  wanted: boolean,
  onConnect: optional(literal(true)),
  urgent: boolean,
  lastStartedAt: nullable(number),
  failures: number,
  polls: number,
  lagPolls: number,
  followUpAt: nullable(number),
  notBefore: nullable(number),
}

const serverFields: EveryField<ServerTraits> = {
  keepsTurnOnDisconnect: nullable(boolean),
  stopsByExecutionId: nullable(boolean),
}

const request = variant(
  {
    message: object({
      kind: literal('message'),
      body: object({
        message: string,
        sessionId: string,
        newSession: optional(literal(true)),
        messageId: optional(string),
      }),
    }),
    resume: object({
      kind: literal('resume'),
      body: object({ runId: string, toolCallId: string, resumeData: anything }),
    }),
  },
  'kind',
)

const ownFields: EveryField<OwnTurn> = {
  token: number,
  text: nullable(string),
  resuming: nullable(string),
  phase: picklist(['posting', 'queued', 'streaming']),
  since: number,
  lastEventAt: number,
  timedOut: boolean,
  settled: boolean,
  batches: number,
  request,
  attempts: number,
  resent: optional(literal(true)),
}

/**
 * The engine state's fields. Optional: the fields a trace recorded before they existed may leave
 * out, which the reducer reads as their first value (`null`, no queue).
 */
const baseStateFields: EveryField<EngineState> = {
  key: object({ projectId: string, agentId: string, threadId: string }),
  tab: string,
  active: boolean,
  disposed: boolean,
  recorded: nullable(aSnapshot),
  synced: boolean,
  notFound: boolean,
  live: nullable(liveTurn),
  kept: boolean,
  liveAfterRead: number,
  liveEndedAfterRead: number,
  settled: array(liveTurn),
  own: nullable(object(ownFields)),
  streams: array(number),
  stop: nullable(stopState),
  reads: object(readsFields),
  server: object(serverFields),
  push: object({ connected: boolean, lost: boolean }),
  othersPosting: boolean,
  presumedEnded: nullable(string),
  answered: array(object({ toolCallId: string, afterRead: number })),
  watching: array(string),
  origins: optional(record(string)),
  reported: array(string),
  cut: boolean,
  draft: string,
  draftSentAs: optional(nullable(string)),
  error: nullable(anError),
  readError: nullable(anError),
  lastSyncedAt: nullable(number),
  dedupesMessages: optional(nullable(boolean)),
  wakeAt: nullable(number),
  recordedHere: boolean,
  staleHint: optional(boolean),
  appRecordAfterRead: nullable(number),
}

/** What `reduce` takes as its state: the engine's fields, and each part's under its own key. */
export const stateSchema: Schema<unknown> = object({
  ...baseStateFields,
  ...releasedShapes.state,
  ...relayShapes.state,
  ...queueShapes.state,
})

const backoff = object({ baseMs: number, maxMs: number })
const configFields: EveryField<EngineConfig> = {
  delegationCharLimit: number,
  retry: backoff,
  poll: backoff,
  minReadIntervalMs: number,
  submitTimeoutMs: number,
  stopWaitMs: number,
  streamSilenceMs: number,
  keepLive: optional(boolean),
}

/** What `reduce` takes as its config. */
export const configSchema: Schema<unknown> = object(configFields)
