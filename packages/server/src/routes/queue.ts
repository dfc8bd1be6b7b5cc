/**
 * The queue routes of the next-era flavor (next-era.md, "Routes"): read, edit, remove, reorder and
 * steer a thread's queued messages, with their 409s. Only the thread's owner reaches them; an
 * unknown thread (or another user's) reads as an empty queue and is a 404 for the others.
 */
import {
  isQueueId,
  parseQueueEditRequest,
  parseQueueReorderRequest,
  parseQueueSteerRequest,
  type ParseResult,
  type QueueRemoveAnswer,
} from '@preview-chat/core/contract'
import { readBody, requireUser, type BackendContext } from '../context'
import { dataResponse, RestError } from '../http'
import {
  announceQueue,
  itemView,
  pendingItems,
  queueOf,
  queueView,
  steerableExecutionId,
} from '../queue/model'
import type { QueueItemRecord, ThreadRecord } from '../store'
import { findThread, ownedThread } from '../threads'
import type { QueueItemRoute, Route } from './match'

/** `GET …/chat/:threadId/queue`: `{items: [], steerableExecutionId: null}` for no thread yet. */
export function readQueue(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'queue' }>,
): Promise<Response> {
  const user = requireUser(context, request, 'agent:read')
  const thread = findThread(context, route.threadId, route, user)
  return Promise.resolve(dataResponse(queueView(context, thread)))
}

/** The body, as the contract's parser reads it; its 400 otherwise. */
function valid<T>(parsed: ParseResult<T>): T {
  if (parsed.success) return parsed.value
  throw new RestError('bad_request', parsed.error.message)
}

/** The route's thread and its item (404 when either is unknown, or the item was removed). */
function target(
  context: BackendContext,
  request: Request,
  route: QueueItemRoute,
): { thread: ThreadRecord; item: QueueItemRecord } {
  const user = requireUser(context, request, 'agent:execute')
  // "A `queueId` is a numeric string (`^[1-9]\d*$`), else 400."
  if (!isQueueId(route.queueId)) {
    throw new RestError(
      'bad_request',
      `The queueId "${route.queueId}" is not a queue id (a numeric string, ^[1-9]\\d*$).`,
    )
  }
  const thread = ownedThread(context, route.threadId, route, user)
  const item = queueOf(context, thread).items.find((entry) => entry.id === route.queueId)
  if (!item || item.state === 'removed') {
    throw new RestError('not_found', `No queued message "${route.queueId}" in this conversation.`)
  }
  return { thread, item }
}

/** The route's thread and item, and the request's body as `parse` reads it (its 400 otherwise). */
async function change<T>(
  context: BackendContext,
  request: Request,
  route: QueueItemRoute,
  parse: (body: unknown) => ParseResult<T>,
): Promise<{ thread: ThreadRecord; item: QueueItemRecord; body: T }> {
  const found = target(context, request, route)
  return { ...found, body: valid(parse(await readBody(context, request))) }
}

/** A pending item may change; one taken up, steered or reserved for steering answers 409. */
function requirePending(item: QueueItemRecord): void {
  if (item.state === 'steering') {
    throw new RestError(
      'queue_item_steering',
      `The queued message "${item.id}" is reserved for steering into the running turn.`,
    )
  }
  if (item.state !== 'pending') {
    throw new RestError(
      'queue_item_started',
      `The queued message "${item.id}" was taken up already; read the history and the queue.`,
    )
  }
}

/** `PATCH …/queue/:queueId` `{message}`: a pending item's new text; answers the item. */
export async function editQueued(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'queueItem' }>,
): Promise<Response> {
  const { thread, item, body } = await change(context, request, route, parseQueueEditRequest)
  requirePending(item)
  item.message = body.message
  announceQueue(context, thread)
  return dataResponse(itemView(item))
}

/**
 * `DELETE …/queue/:queueId`: `{removed: true}`. The POST that still waits for the item hears why
 * it ends (`queue_item_removed`); its `messageId` stays used ("A removed message's id stays used").
 */
export function removeQueued(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'queueItem' }>,
): Promise<Response> {
  const { thread, item } = target(context, request, route)
  requirePending(item)
  item.state = 'removed'
  item.stream.send({
    type: 'error',
    message: 'The queued message was removed before it was taken up.',
    errorCode: 'queue_item_removed',
  })
  item.stream.close()
  announceQueue(context, thread)
  const answer: QueueRemoveAnswer = { removed: true }
  return Promise.resolve(dataResponse(answer))
}

/**
 * `POST …/queue/:queueId/reorder` `{targetQueueId, expectedQueueIds}`: the item takes the target's
 * place (the others shift, as a dragged row does); 409 when `expectedQueueIds` is not the stored
 * pending order. Answers the queue.
 */
export async function reorderQueued(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'queueReorder' }>,
): Promise<Response> {
  const { thread, item, body } = await change(context, request, route, parseQueueReorderRequest)
  const queue = queueOf(context, thread)
  const order = pendingItems(queue).map((pending) => pending.id)
  if (order.join() !== body.expectedQueueIds.join()) {
    throw new RestError('queue_changed', 'The queue has changed. Refresh it and try again.')
  }
  requirePending(item)
  const to = order.indexOf(body.targetQueueId)
  if (to === -1) {
    throw new RestError('bad_request', `The targetQueueId "${body.targetQueueId}" is not queued.`)
  }
  const moved = order.filter((id) => id !== item.id)
  moved.splice(to, 0, item.id)
  const byId = new Map(queue.items.map((entry) => [entry.id, entry]))
  const others = queue.items.filter((entry) => entry.state !== 'pending')
  queue.items = [...others, ...moved.map((id) => byId.get(id) as QueueItemRecord)]
  announceQueue(context, thread)
  return dataResponse(queueView(context, thread))
}

/**
 * `POST …/queue/:queueId/steer` `{executionId}`: reserves the item for the running turn, which
 * takes it in at its next pause (`steer.ts`); 409 unless that execution is the one open to
 * steering. Answers the item (its `steeringExecutionId` set).
 */
export async function steerQueued(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'queueSteer' }>,
): Promise<Response> {
  const { thread, item, body } = await change(context, request, route, parseQueueSteerRequest)
  requirePending(item)
  if (steerableExecutionId(context, thread) !== body.executionId) {
    throw new RestError(
      'not_steerable',
      `The execution "${body.executionId}" is not the one open to steering in this conversation.`,
      'Read the queue: its steerableExecutionId names the turn a message can join now.',
    )
  }
  item.state = 'steering'
  item.steeringExecutionId = body.executionId
  announceQueue(context, thread)
  return dataResponse(itemView(item))
}
