/**
 * The platform's unreleased message queue (`shared/interop/next-era.md`, "The queue in detail"):
 * the turn-stream events of a queued message, the queue resource and its routes' bodies and
 * answers, and the 409s those routes answer. Kept apart from `TurnEvent` and `PushMessage`: those
 * unions are what every server speaks. Only `message-queued` is in `TurnEvent` too (every client
 * must take it as its message's acceptance); `parseTurnEvent` reports the other types as `ignored`
 * (a client that does not know the queue tolerates them), and keeps no `inputMessageIds` of
 * `execution-started`. A client that knows the queue reads each event with
 * `queueEventFrom` first (the queue's events, and `execution-started` with its
 * `inputMessageIds`), then with `turnEventFrom` what that reports `ignored`. Nothing here is
 * bundled by a client that does not import it.
 */
import type { PreviewChatError } from './errors'
import type { ExecutionStartedEvent, MessageQueuedEvent } from './events'
import { isRecord, parseJson, unwrapEnvelope, validate, type ParseResult } from './result'
import {
  array,
  check,
  hasOwn,
  nullable,
  object,
  optional,
  string,
  typed,
  unknown,
  type Schema,
} from './schema'

/**
 * A queued message added to the running turn: the client drops the queue row and shows the
 * message in the turn; a repeated or late one cannot bring the row back.
 */
export interface MessageSteeredEvent {
  type: 'message-steered'
  queueId: string
  executionId: string
  message: string
}

/** A notice about the agent's budget (`code` says which); it ends nothing. */
export interface BudgetNoticeEvent {
  type: 'budget-notice'
  code: string
}

/** A message the server queued (its acceptance): a turn event every client reads (`events.ts`). */
export type { MessageQueuedEvent }

/** A turn-stream event of the queue protocol. */
export type QueueTurnEvent = MessageQueuedEvent | MessageSteeredEvent | BudgetNoticeEvent
export type QueueTurnEventType = QueueTurnEvent['type']

const str = string

/** "A `queueId` is a numeric string (`^[1-9]\d*$`), else 400." */
export const queueIdPattern = /^[1-9]\d*$/
export const isQueueId = (id: unknown): id is string =>
  typeof id === 'string' && queueIdPattern.test(id)
const queueId = /* @__PURE__ */ check(
  str,
  isQueueId,
  'must be a queue id (a numeric string, ^[1-9]\\d*$)',
)

/** What `queueEventFrom` reads: the queue's events, and `execution-started` with its inputs. */
export type QueueStreamEvent = QueueTurnEvent | ExecutionStartedEvent

// Each schema is marked pure: a bundle keeps only those its importer reads.
const queueEventSchemas = /* @__PURE__ */ typed({
  'message-queued': { queueId, sessionId: str },
  'message-steered': { queueId, executionId: str, message: str },
  'budget-notice': { code: str },
  'execution-started': {
    executionId: str,
    sessionId: str,
    inputMessageIds: /* @__PURE__ */ optional(/* @__PURE__ */ array(str)),
  },
}) satisfies {
  [K in QueueStreamEvent['type']]: Schema<Extract<QueueStreamEvent, { type: K }>>
}

export type QueueEventParseResult =
  | { kind: 'event'; event: QueueStreamEvent }
  /** Not one of these (another turn event, or a type nobody knows): read it with `turnEventFrom`. */
  | { kind: 'ignored'; type: string }
  | { kind: 'invalid'; error: PreviewChatError }

/** One SSE `data:` block as a queue event. Never throws. */
export function parseQueueEvent(data: string): QueueEventParseResult {
  const json = parseJson(data, 'A turn stream event')
  return json.success ? queueEventFrom(json.value) : { kind: 'invalid', error: json.error }
}

/** `parseQueueEvent` for an already parsed JSON value (what `turnEventFrom` reported `ignored`). */
export function queueEventFrom(raw: unknown): QueueEventParseResult {
  const type = isRecord(raw) ? raw.type : undefined
  if (!hasOwn(queueEventSchemas, type)) {
    return { kind: 'ignored', type: typeof type === 'string' ? type : '' }
  }
  const schema: Schema<QueueStreamEvent> = queueEventSchemas[type]
  const result = validate(schema, raw, `A "${type}" turn stream event`)
  return result.success
    ? { kind: 'event', event: result.value }
    : { kind: 'invalid', error: result.error }
}

/** One waiting message of a thread's queue (`GET …/chat/:threadId/queue`). */
export interface QueueItem {
  id: string
  message: string
  attachments: unknown[]
  /** The execution this item is reserved to steer into, or null while it only waits. */
  steeringExecutionId: string | null
  /** ISO-8601. */
  createdAt: string
}

/** A thread's queue: accepted steers first, then the pending items in the order they will run. */
export interface MessageQueue {
  /** The running execution a queued message can be steered into now, if any. */
  steerableExecutionId: string | null
  items: QueueItem[]
}

const queueItemSchema = /* @__PURE__ */ object({
  id: queueId,
  message: str,
  attachments: /* @__PURE__ */ array(unknown),
  steeringExecutionId: /* @__PURE__ */ nullable(str),
  createdAt: str,
}) satisfies Schema<QueueItem>

const messageQueueSchema = /* @__PURE__ */ object({
  steerableExecutionId: /* @__PURE__ */ nullable(str),
  items: /* @__PURE__ */ array(queueItemSchema),
}) satisfies Schema<MessageQueue>

/** The answer of `GET …/queue` and of a reorder (`{ data }` or bare). */
export function parseMessageQueue(body: unknown): ParseResult<MessageQueue> {
  return validate(messageQueueSchema, unwrapEnvelope(body), 'The message queue')
}

/** The answer of an edit (`PATCH …/queue/:queueId`) and of a steer: the item as it is now. */
export function parseQueueItem(body: unknown): ParseResult<QueueItem> {
  return validate(queueItemSchema, unwrapEnvelope(body), 'The queue item')
}

/** The answer of `DELETE …/queue/:queueId`. */
export interface QueueRemoveAnswer {
  removed: true
}

export function parseQueueRemoveAnswer(body: unknown): ParseResult<QueueRemoveAnswer> {
  return validate(
    object({
      removed: check(unknown, (value) => value === true, 'must be true'),
    }) as Schema<QueueRemoveAnswer>,
    unwrapEnvelope(body),
    'The queue removal answer',
  )
}

/** Body of `PATCH …/chat/:threadId/queue/:queueId`: the item's new text (400 if blank). */
export interface QueueEditBody {
  message: string
}

/** Body of `POST …/queue/:queueId/reorder`: where it goes, and the pending order the client saw. */
export interface QueueReorderBody {
  /** The item whose place the moved item takes. */
  targetQueueId: string
  /** The current pending order, at least two ids; a different stored order is a 409. */
  expectedQueueIds: string[]
}

/** Body of `POST …/queue/:queueId/steer`: the running execution to add the item to. */
export interface QueueSteerBody {
  executionId: string
}

const nonBlank = /* @__PURE__ */ check(
  str,
  (text) => text.trim().length > 0,
  'must have non-blank text',
)
const editSchema = /* @__PURE__ */ object({ message: nonBlank }) satisfies Schema<QueueEditBody>
const reorderSchema = /* @__PURE__ */ object({
  targetQueueId: queueId,
  expectedQueueIds: /* @__PURE__ */ check(
    /* @__PURE__ */ array(queueId),
    (ids) => ids.length >= 2,
    'must list at least two ids',
  ),
}) satisfies Schema<QueueReorderBody>
const steerSchema = /* @__PURE__ */ object({ executionId: str }) satisfies Schema<QueueSteerBody>

/** The server's side of an edit. */
export function parseQueueEditRequest(body: unknown): ParseResult<QueueEditBody> {
  return validate(editSchema, body, 'The queue edit body', 'bad_request')
}

export function parseQueueReorderRequest(body: unknown): ParseResult<QueueReorderBody> {
  return validate(reorderSchema, body, 'The queue reorder body', 'bad_request')
}

export function parseQueueSteerRequest(body: unknown): ParseResult<QueueSteerBody> {
  return validate(steerSchema, body, 'The queue steer body', 'bad_request')
}

/**
 * Why a queue route answered 409 (the REST error body's `code` on the reference server):
 * - `queue_changed`: a reorder's `expectedQueueIds` is not the stored pending order;
 * - `queue_item_started`: the item was taken up (or steered) already;
 * - `queue_item_steering`: the item is reserved for steering into the running turn;
 * - `not_steerable`: the execution a steer names is not the one open to steering.
 */
export type QueueConflict =
  'queue_changed' | 'queue_item_started' | 'queue_item_steering' | 'not_steerable'

export const queueConflicts: readonly QueueConflict[] = [
  'queue_changed',
  'queue_item_started',
  'queue_item_steering',
  'not_steerable',
]

/**
 * The queue conflict a route's error says, or null when it is another error. Any other 409 (the
 * platform's own, whose codes are numbers) is `queue_changed`: refresh the queue and try again.
 */
export function queueConflictOf(error: PreviewChatError): QueueConflict | null {
  if (error.status !== 409) return null
  const code = error.serverCode as QueueConflict
  return queueConflicts.includes(code) ? code : 'queue_changed'
}
