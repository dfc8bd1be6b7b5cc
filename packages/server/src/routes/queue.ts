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
  queueView,
  steerableExecutionId,
  takeQueueStream,
} from '../queue/model'
import type { QueueChange, QueueItemRecord, ThreadKey, ThreadRecord } from '../store/types'
import { keyOfThread, ownedThread, threadKeyOf } from '../threads'
import type { QueueItemRoute, Route } from './match'

/** `GET …/chat/:threadId/queue`: `{items: [], steerableExecutionId: null}` for no thread yet. */
export async function readQueue(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'queue' }>,
): Promise<Response> {
  const user = await requireUser(context, request, 'agent:read')
  const key = threadKeyOf(route, user, route.threadId)
  const thread = await context.store.readThread(key)
  return dataResponse(await queueView(context, key, thread))
}

/** The body, as the contract's parser reads it; its 400 otherwise. */
function valid<T>(parsed: ParseResult<T>): T {
  if (parsed.success) return parsed.value
  throw new RestError('bad_request', parsed.error.message)
}

interface Target {
  thread: ThreadRecord
  key: ThreadKey
  item: QueueItemRecord
}

/** The route's thread and its item (404 when either is unknown, or the item was removed). */
async function target(
  context: BackendContext,
  request: Request,
  route: QueueItemRoute,
): Promise<Target> {
  const user = await requireUser(context, request, 'agent:execute')
  // "A `queueId` is a numeric string (`^[1-9]\d*$`), else 400."
  if (!isQueueId(route.queueId)) {
    throw new RestError(
      'bad_request',
      `The queueId "${route.queueId}" is not a queue id (a numeric string, ^[1-9]\\d*$).`,
    )
  }
  const thread = await ownedThread(context, route.threadId, route, user)
  const key = keyOfThread(thread)
  const item = (await context.store.readQueue(key)).find((entry) => entry.id === route.queueId)
  if (!item || item.state === 'removed') throw notQueued(route.queueId)
  return { thread, key, item }
}

const notQueued = (queueId: string) =>
  new RestError('not_found', `No queued message "${queueId}" in this conversation.`)

/** The route's thread and item, and the request's body as `parse` reads it (its 400 otherwise). */
async function change<T>(
  context: BackendContext,
  request: Request,
  route: QueueItemRoute,
  parse: (body: unknown) => ParseResult<T>,
): Promise<Target & { body: T }> {
  const found = await target(context, request, route)
  return { ...found, body: valid(parse(await readBody(context, request))) }
}

/** A pending item may change; one taken up, steered or reserved for steering answers 409. */
function requirePending(item: QueueItemRecord): void {
  if (item.state === 'steering') throw steering(item.id)
  if (item.state !== 'pending') throw started(item.id)
}

const steering = (queueId: string) =>
  new RestError(
    'queue_item_steering',
    `The queued message "${queueId}" is reserved for steering into the running turn.`,
  )
const started = (queueId: string) =>
  new RestError(
    'queue_item_started',
    `The queued message "${queueId}" was taken up already; read the history and the queue.`,
  )
const notSteerable = (executionId: string) =>
  new RestError(
    'not_steerable',
    `The execution "${executionId}" is not the one open to steering in this conversation.`,
    'Read the queue: its steerableExecutionId names the turn a message can join now.',
  )

/** Applies one change in the store, which checks again atomically; its refusal as the route's. */
async function apply(
  context: BackendContext,
  { key, item }: Target,
  queueChange: QueueChange,
): Promise<QueueItemRecord> {
  const result = await context.store.changeQueued(key, item.id, queueChange)
  if (result.ok) return result.item
  switch (result.reason) {
    case 'not_found':
      throw notQueued(item.id)
    case 'steering':
      throw steering(item.id)
    case 'started':
      throw started(item.id)
    case 'queue_changed':
      throw new RestError('queue_changed', 'The queue has changed. Refresh it and try again.')
    case 'target_not_queued':
      throw new RestError('bad_request', 'The targetQueueId is not queued.')
    case 'not_steerable':
      throw notSteerable(queueChange.kind === 'steer' ? queueChange.executionId : '')
  }
}

/** `PATCH …/queue/:queueId` `{message}`: a pending item's new text; answers the item. */
export async function editQueued(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'queueItem' }>,
): Promise<Response> {
  const found = await change(context, request, route, parseQueueEditRequest)
  requirePending(found.item)
  const item = await apply(context, found, { kind: 'edit', message: found.body.message })
  await announceQueue(context, found.key)
  return dataResponse(itemView(item))
}

/**
 * `DELETE …/queue/:queueId`: `{removed: true}`. The POST that still waits for the item hears why
 * it ends (`queue_item_removed`); its `messageId` stays used ("A removed message's id stays used").
 */
export async function removeQueued(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'queueItem' }>,
): Promise<Response> {
  const found = await target(context, request, route)
  requirePending(found.item)
  await apply(context, found, { kind: 'remove' })
  const stream = takeQueueStream(context, found.item.id)
  stream?.send({
    type: 'error',
    message: 'The queued message was removed before it was taken up.',
    errorCode: 'queue_item_removed',
  })
  stream?.close()
  await announceQueue(context, found.key)
  const answer: QueueRemoveAnswer = { removed: true }
  return dataResponse(answer)
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
  const found = await change(context, request, route, parseQueueReorderRequest)
  const { targetQueueId, expectedQueueIds } = found.body
  const order = pendingItems(await context.store.readQueue(found.key)).map((pending) => pending.id)
  if (order.join() !== expectedQueueIds.join()) {
    throw new RestError('queue_changed', 'The queue has changed. Refresh it and try again.')
  }
  requirePending(found.item)
  if (!order.includes(targetQueueId)) {
    throw new RestError('bad_request', `The targetQueueId "${targetQueueId}" is not queued.`)
  }
  await apply(context, found, { kind: 'reorder', targetQueueId, expectedQueueIds })
  await announceQueue(context, found.key)
  return dataResponse(await queueView(context, found.key, found.thread))
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
  const found = await change(context, request, route, parseQueueSteerRequest)
  const { executionId } = found.body
  requirePending(found.item)
  if ((await steerableExecutionId(context, found.thread)) !== executionId) {
    throw notSteerable(executionId)
  }
  const item = await apply(context, found, { kind: 'steer', executionId })
  await announceQueue(context, found.key)
  return dataResponse(itemView(item))
}
