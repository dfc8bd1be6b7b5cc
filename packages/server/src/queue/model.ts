/**
 * The next-era flavor's server-side queue (`shared/interop/next-era.md`, "The queue in detail"):
 * a message is committed with its queue item, `message-queued` is its acceptance, and the item
 * is taken up (`execution-started` with `inputMessageIds`) once the thread is free. What the
 * routes do to the queue is `routes/queue.ts`; steering is `steer.ts`.
 */
import type { MessageQueue, QueueItem } from '@preview-chat/core/contract'
import type { BackendContext } from '../context'
import { createSseStream, turnQueueLimitBytes } from '../sse'
import { threadKey, type QueueItemRecord, type ThreadQueue, type ThreadRecord } from '../store'

/** The thread's queue, made empty on first use. */
export function queueOf(context: BackendContext, thread: ThreadRecord): ThreadQueue {
  const key = threadKey(thread, thread.id)
  let queue = context.store.queues.get(key)
  if (!queue) context.store.queues.set(key, (queue = { items: [] }))
  return queue
}

/** The items that wait their turn, in the order they will run. */
export const pendingItems = (queue: ThreadQueue): QueueItemRecord[] =>
  queue.items.filter((item) => item.state === 'pending')

/**
 * The running execution a queued message may be steered into: the thread's active one, while it
 * runs a message's turn and no Stop of it is under way.
 */
export function steerableExecutionId(
  context: BackendContext,
  thread: ThreadRecord | undefined,
): string | null {
  const id = thread?.activeExecutionId ?? null
  if (id === null) return null
  const execution = context.store.executions.get(id)
  if (execution?.status !== 'running' || execution.kind !== 'message') return null
  return context.running.get(id)?.controller.signal.aborted === true ? null : id
}

export function itemView(item: QueueItemRecord): QueueItem {
  return {
    id: item.id,
    message: item.message,
    attachments: [],
    steeringExecutionId: item.steeringExecutionId,
    createdAt: item.createdAt,
  }
}

/** `GET …/queue`: accepted steers first, then the pending items ("accepted steers first"). */
export function queueView(context: BackendContext, thread: ThreadRecord | undefined): MessageQueue {
  const items = thread ? queueOf(context, thread).items : []
  return {
    steerableExecutionId: steerableExecutionId(context, thread),
    items: [
      ...items.filter((item) => item.state === 'steering'),
      ...items.filter((item) => item.state === 'pending'),
    ].map(itemView),
  }
}

/** Every tab of the owner hears that the thread's queue changed (no contents: read the queue). */
export function announceQueue(context: BackendContext, thread: ThreadRecord): void {
  context.store.push.publish(thread.ownerId, {
    type: 'agentMessageQueueUpdated',
    data: { projectId: thread.projectId, agentId: thread.agentId, threadId: thread.id },
  })
}

/**
 * Commits a new message with its queue item and sends `message-queued` on the POST's stream,
 * which stays open: the item's turn streams on it once taken up (now, if the thread is free).
 */
export function enqueue(
  context: BackendContext,
  thread: ThreadRecord,
  message: { text: string; messageId?: string | undefined },
): QueueItemRecord {
  const stream = createSseStream({
    pingMs: context.pingMs,
    timers: context.timers,
    maxQueuedBytes: turnQueueLimitBytes,
  })
  const item: QueueItemRecord = {
    id: String(++context.store.queueSeq),
    message: message.text,
    ...(message.messageId !== undefined && { messageId: message.messageId }),
    createdAt: new Date(context.now()).toISOString(),
    state: 'pending',
    steeringExecutionId: null,
    stream,
  }
  queueOf(context, thread).items.push(item)
  stream.send({ type: 'message-queued', queueId: item.id, sessionId: thread.id })
  announceQueue(context, thread)
  takeUpNext(context, thread)
  return item
}

/**
 * Starts the first pending item, where the thread is free: "Taking up the next item waits for a
 * running execution, an open approval checkpoint or a pending cancel" (a cancel is pending while
 * its execution still runs).
 */
export function takeUpNext(context: BackendContext, thread: ThreadRecord): void {
  if (thread.activeExecutionId !== null || thread.openSuspensions.length > 0) return
  const item = pendingItems(queueOf(context, thread))[0]
  if (!item) return
  item.state = 'started'
  context.begin({
    thread,
    kind: 'message',
    input: { kind: 'message', message: item.message },
    userText: item.message,
    ...(item.messageId !== undefined && { messageId: item.messageId }),
    announcesInputs: true,
    stream: item.stream,
  })
  announceQueue(context, thread)
}

/**
 * After an execution ends: "A failure, cancel, suspension or crash puts unconsumed items back where
 * they were" (steers it did not take in go back to pending, in place), then the next is taken up.
 */
export function afterExecution(context: BackendContext, thread: ThreadRecord, executionId: string) {
  let changed = false
  for (const item of queueOf(context, thread).items) {
    if (item.state !== 'steering' || item.steeringExecutionId !== executionId) continue
    item.state = 'pending'
    item.steeringExecutionId = null
    changed = true
  }
  if (changed) announceQueue(context, thread)
  // A main that closes (`interrupted`) starts nothing more: the items wait, as after a crash.
  if (context.store.executions.get(executionId)?.status === 'interrupted') return
  takeUpNext(context, thread)
}
