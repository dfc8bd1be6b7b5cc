/**
 * The engine's actions, state and config as JSON shapes: what `parseTrace` checks a trace against
 * before any of it reaches the reducer (a newer build's trace, a hand edit). Each table is typed
 * against `model.ts` — a key per action type, per required field, per state field — so an action
 * or a field added there and not here fails the typecheck: the set of action types has this one
 * source (`ACTION_TYPES`), not a second hand-kept list. Every level is checked, with the wire's own
 * shapes where a value came from the wire (a snapshot, a turn event, a push message, a live turn,
 * the stored queue): no trace that passes can make the reducer throw a raw `TypeError`.
 */
import {
  array,
  boolean,
  check,
  isRecord,
  literal,
  nullable,
  number,
  object,
  optional,
  picklist,
  record,
  string,
  unknown,
  variant,
  type Schema,
} from '../wire/contract/schema'
import { pushSchema } from '../wire/contract/push'
import { completedSchema } from '../wire/contract/snapshot'
import type { EngineAction, EngineConfig, OwnTurn, ReadState, ServerTraits } from './model'
import type { QueueState } from './queue/model'
import type { QueuedState } from './queue/state'
import type { RelayingState } from './slices/relay'
import type { ReleasingState } from './slices/released'
import { storedSchema } from './queue/stored'
import { liveTurn, turnEvent } from './relay'

/** The keys of `T` that may not be left out (`text: string | undefined` is one: it must be listed). */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T]

/** A schema for each field of `T` an action must carry (its `type` aside). */
type FieldsOf<T> = { [K in Exclude<RequiredKeys<T>, 'type'>]: Schema<unknown> }

/** A schema for every field of `T`, required or not (the table says which may be absent). */
type EveryField<T> = { [K in keyof T]-?: Schema<unknown> }

const anObject = check(unknown, isRecord, 'expected an object')
/** A capabilities header's tokens (`turn-opened`, `capabilities-heard`). */
const strings = array(string)
const anError = object({ code: string, message: string })
/** A field that may be absent from JSON, as `undefined` is (`text` of `submit-requested`). */
const anything = optional(unknown)
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
/** What the host heard of a hand-over (`QueuePostHeard`): one of three, by its one field. */
const heard: Schema<unknown> = (input, issues, path) => {
  if (!isRecord(input)) return anObject(input, issues, path)
  const one = [object({ event: turnEvent }), object({ cut: anError }), object({ failed: anError })][
    Object.hasOwn(input, 'event') ? 0 : Object.hasOwn(input, 'cut') ? 1 : 2
  ] as Schema<unknown>
  return one(input, issues, path)
}
const qid = { queueId: string }
const call = variant(
  {
    edit: object({ op: literal('edit'), ...qid, text: string }),
    remove: object({ op: literal('remove'), ...qid }),
    reorder: object({
      op: literal('reorder'),
      ...qid,
      targetQueueId: string,
      expectedQueueIds: array(string),
    }),
    steer: object({ op: literal('steer'), ...qid, executionId: string }),
  },
  'op',
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

/** The fields each action type carries, by type: the engine's actions, the queue's among them. */
const actionFields: { [T in EngineAction['type']]: FieldsOf<Extract<EngineAction, { type: T }>> } =
  {
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
    'relay-received': { data: anything, at: number, stampedAt: number },
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
    'queue-attached': {
      stored: anything,
      kept: boolean,
      whenStopped: picklist(['keep', 'pause', 'draft']),
      at: number,
    },
    'queue-store-refused': { error: anError },
    'queue-stored': { stored: anything },
    'queue-locked': { stored: anything },
    'queue-written': {},
    'queue-store-failed': { error: anError },
    'queue-sender': { held: boolean },
    'queue-edit': { id: string, text: string },
    'queue-remove': { id: string },
    'queue-reorder': { id: string, to: number },
    'queue-send-now': { id: string },
    'queue-resume': {},
    'queue-server-changed': {
      thread: object({ projectId: string, agentId: string, threadId: string }),
    },
    'queue-server-read': { seq: number },
    'queue-posted': { token: number, heard },
    'queue-called': { call, error: nullable(anError), conflict: nullable(string) },
    'queue-leaving': {},
  }

/** Every action type this engine takes (the queue's too): the keys of the table above. */
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

const item = object({
  id: string,
  text: string,
  status: picklist(['queued', 'sending', 'undelivered']),
  error: optional(anError),
  by: optional(string),
  queueId: optional(string),
})
const id = { id: string }
/** One change of the queue (`QueueChange`), by `op`. */
const queueChange = variant(
  {
    add: object({ op: literal('add'), item }),
    edit: object({ op: literal('edit'), ...id, text: string }),
    remove: object({ op: literal('remove'), ...id }),
    done: object({ op: literal('done'), ...id }),
    move: object({ op: literal('move'), ...id, before: nullable(string) }),
    front: object({ op: literal('front'), ...id, retry: optional(literal(true)) }),
    mark: object({
      op: literal('mark'),
      ...id,
      status: picklist(['queued', 'sending', 'undelivered']),
      error: optional(anError),
      by: optional(string),
    }),
    hold: object({ op: literal('hold'), ids: array(string) }),
    resume: object({ op: literal('resume') }),
    dedupes: object({ op: literal('dedupes'), dedupes: boolean }),
    'server-queue': object({ op: literal('server-queue'), serverQueue: boolean }),
    stopped: object({ op: literal('stopped'), executionId: string }),
    'server-changed': object({ op: literal('server-changed') }),
    handed: object({ op: literal('handed'), ...id, queueId: string }),
  },
  'op',
)
const changes = array(queueChange)

const queueFields: EveryField<QueueState> = {
  stored: storedSchema,
  pending: changes,
  view: storedSchema,
  writing: nullable(object({ changes, before: storedSchema })),
  locking: boolean,
  unwritten: optional(nullable(object({ attempts: number, retryAt: number }))),
  sender: boolean,
  whenStopped: picklist(['keep', 'pause', 'draft']),
  sending: nullable(
    object({
      ...id,
      token: number,
      posted: boolean,
      via: optional(literal('server-queue')),
      attempts: optional(number),
    }),
  ),
  attached: boolean,
  kept: boolean,
  recordRead: boolean,
  sends: number,
  judgeAfterRead: nullable(number),
  clock: number,
  server: nullable(
    object({
      steerable: nullable(string),
      items: array(object({ queueId: string, text: string, steering: boolean })),
    }),
  ),
  serverReads: object({ asked: number, applied: number, inFlight: boolean, wanted: boolean }),
  handedAt: record(number),
  handedPosts: record(string),
}

/**
 * The engine state's fields. Optional: the fields a trace recorded before they existed may leave
 * out, which the reducer reads as their first value (`null`, no queue).
 */
const stateFields: EveryField<QueuedState & RelayingState & ReleasingState> = {
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
  // Each part's state, under its own key (absent without the part).
  queue: optional(object(queueFields)),
  relay: optional(
    object({
      following: nullable(
        object({
          tab: string,
          executionId: string,
          seq: number,
          since: number,
          checked: nullable(number),
        }),
      ),
      syncAsked: nullable(string),
      holds: record(number),
    }),
  ),
  released: optional(
    object({
      silent: nullable(object({ executionId: string, since: number, expired: boolean })),
    }),
  ),
}

/** What `reduce` takes as its state. */
export const stateSchema: Schema<unknown> = object(stateFields)

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
