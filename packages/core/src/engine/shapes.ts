/**
 * The engine's actions, state and config as JSON shapes: what `parseTrace` checks a trace against
 * before any of it reaches the reducer (a newer build's trace, a hand edit). Each table is typed
 * against `model.ts` — a key per action type, per required field, per state field — so an action
 * or a field added there and not here fails the typecheck: the set of action types has this one
 * source (`ACTION_TYPES`), not a second hand-kept list. The checks are one level deep: the fields
 * the reducer reads first; a value inside them is the reducer's own.
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
  type Schema,
} from '../wire/contract/schema'
import type { EngineAction, EngineConfig, EngineState, ReadState, ServerTraits } from './model'

/** The keys of `T` that may not be left out (`text: string | undefined` is one: it must be listed). */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T]

/** A schema for each field of `T` an action must carry (its `type` aside). */
type FieldsOf<T> = { [K in Exclude<RequiredKeys<T>, 'type'>]: Schema<unknown> }

/** A schema for every field of `T`, required or not (the table says which may be absent). */
type EveryField<T> = { [K in keyof T]-?: Schema<unknown> }

const anObject = check(unknown, isRecord, 'expected an object')
const anArray = array(unknown)
/** A capabilities header's tokens (`turn-opened`, `capabilities-heard`). */
const strings = array(string)
const anError = object({ code: string, message: string })
/** A field that may be absent from JSON, as `undefined` is (`text` of `submit-requested`). */
const anything = optional(unknown)

/** The fields each action type carries, by type: the engine's actions, the queue's among them. */
const actionFields: { [T in EngineAction['type']]: FieldsOf<Extract<EngineAction, { type: T }>> } =
  {
    mounted: { cached: anObject, at: number, stampedAt: number, random: number },
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
    'turn-events': { token: number, events: anArray, at: number, stampedAt: number },
    'stream-ended': { token: number, end: anObject },
    'relay-received': { data: anything, at: number, stampedAt: number },
    'read-wanted': { urgent: boolean },
    'prefetch-requested': { at: number },
    'listener-threw': { listener: picklist(['state', 'turn-end']), message: string },
    'push-message': { message: anObject },
    'read-started': { at: number, fetch: number },
    snapshot: {
      snapshot: anObject,
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
    'queue-posted': { token: number, heard: anObject },
    'queue-called': { call: anObject, error: nullable(anError), conflict: nullable(string) },
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

/**
 * The engine state's fields. Optional: the fields a trace recorded before they existed may leave
 * out, which the reducer reads as their first value (`null`, no queue).
 */
const stateFields: EveryField<EngineState> = {
  key: object({ projectId: string, agentId: string, threadId: string }),
  tab: string,
  active: boolean,
  disposed: boolean,
  recorded: nullable(anObject),
  synced: boolean,
  notFound: boolean,
  live: nullable(anObject),
  kept: boolean,
  liveAfterRead: number,
  liveEndedAfterRead: number,
  settled: anArray,
  own: nullable(anObject),
  streams: array(number),
  stop: nullable(anObject),
  reads: object(readsFields),
  server: object(serverFields),
  push: object({ connected: boolean, lost: boolean }),
  relay: nullable(anObject),
  syncAsked: nullable(string),
  postingHolds: record(number),
  silent: nullable(anObject),
  answered: anArray,
  watching: array(string),
  origins: optional(record(string)),
  reported: array(string),
  standInBase: array(string),
  settledBase: optional(record(array(string))),
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
  queue: optional(anObject),
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
