/**
 * The next-era flavor's server-side queue (`shared/interop/next-era.md`, "The queue in detail"):
 * a message is committed with its queue item, `message-queued` is its acceptance, and the item
 * is taken up (`execution-started` with `inputMessageIds`) once the thread is free. The items are
 * the store's; the POST streams waiting for them are this main's (`queueStreams`). What the routes
 * do to the queue is `routes/queue.ts`; steering is `steer.ts`.
 */
import type { MessageQueue, QueueItem } from '@preview-chat/core/contract'
import { refusalAnswer } from '../admission'
import type { BackendContext } from '../context'
import { createSseStream, sseResponse, turnQueueLimitBytes } from '../sse'
import type { ExecutionRecord, QueueItemRecord, ThreadKey, ThreadRecord } from '../store/types'

/** The items that wait their turn, in the order they will run. */
export const pendingItems = (items: readonly QueueItemRecord[]): QueueItemRecord[] =>
  items.filter((item) => item.state === 'pending')

/**
 * The running execution a queued message may be steered into: the thread's active one, while it
 * runs a message's turn and no Stop of it is under way (on this main: another main's is unknown).
 */
export async function steerableExecutionId(
  context: BackendContext,
  thread: ThreadRecord | undefined,
): Promise<string | null> {
  const id = thread?.activeExecutionId ?? null
  if (id === null) return null
  const execution = await context.store.readExecution(id)
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
export async function queueView(
  context: BackendContext,
  key: ThreadKey,
  thread: ThreadRecord | undefined,
): Promise<MessageQueue> {
  const items = thread ? await context.store.readQueue(key) : []
  return {
    steerableExecutionId: await steerableExecutionId(context, thread),
    items: [
      ...items.filter((item) => item.state === 'steering'),
      ...items.filter((item) => item.state === 'pending'),
    ].map(itemView),
  }
}

/** Every tab of the owner hears that the thread's queue changed (no contents: read the queue). */
export function announceQueue(context: BackendContext, key: ThreadKey): Promise<void> {
  return context.bus.publish(key.ownerId, {
    type: 'agentMessageQueueUpdated',
    data: { projectId: key.projectId, agentId: key.agentId, threadId: key.threadId },
  })
}

/**
 * Commits a new message with its queue item and answers `message-queued` on the POST's stream,
 * which stays open: the item's turn streams on it once taken up (now, if the thread is free).
 */
export async function enqueue(
  context: BackendContext,
  key: ThreadKey,
  message: { text: string; messageId?: string },
): Promise<Response> {
  const result = await context.store.enqueue({
    thread: key,
    create: true,
    message: message.text,
    ...(message.messageId !== undefined && { messageId: message.messageId }),
    createdAt: new Date(context.now()).toISOString(),
  })
  if (!result.ok) return refusalAnswer(result.reason)
  const stream = createSseStream({
    pingMs: context.pingMs,
    timers: context.timers,
    maxQueuedBytes: turnQueueLimitBytes,
  })
  context.queueStreams.set(result.item.id, stream)
  stream.send({ type: 'message-queued', queueId: result.item.id, sessionId: key.threadId })
  await announceQueue(context, key)
  await takeUpNext(context, key)
  return sseResponse(stream)
}

/** Ends the POST stream of a queued item that left the queue otherwise than by starting. */
export function takeQueueStream(context: BackendContext, queueId: string) {
  const stream = context.queueStreams.get(queueId)
  context.queueStreams.delete(queueId)
  return stream
}

/**
 * Starts the first pending item, where the thread is free: "Taking up the next item waits for a
 * running execution, an open approval checkpoint or a pending cancel" (a cancel is pending while
 * its execution still runs). The store decides, atomically.
 */
export async function takeUpNext(context: BackendContext, key: ThreadKey): Promise<void> {
  // A main that shuts down starts nothing more: the items wait for another main.
  if (context.closing) return
  const taken = await context.admit('message', (execution) =>
    context.store.takeUpNext(key, execution),
  )
  if (!taken) return
  const { item } = taken
  const stream = takeQueueStream(context, item.id)
  const { started } = context.begin({
    thread: taken.thread,
    execution: taken.execution,
    input: { kind: 'message', message: item.message },
    userText: item.message,
    ...(item.messageId !== undefined && { messageId: item.messageId }),
    announcesInputs: true,
    ...(stream && { stream }),
  })
  await started
  await announceQueue(context, key)
}

/**
 * After an execution ends: "A failure, cancel, suspension or crash puts unconsumed items back where
 * they were" (steers it did not take in go back to pending, in place), then the next is taken up.
 */
export async function afterExecution(
  context: BackendContext,
  key: ThreadKey,
  execution: ExecutionRecord,
): Promise<void> {
  if ((await context.store.releaseSteers(key, execution.id)) > 0) await announceQueue(context, key)
  // A main that closes (`interrupted`) starts nothing more: the items wait, as after a crash.
  if (execution.status === 'interrupted') return
  await takeUpNext(context, key)
}
