import type { HistorySnapshot } from '@preview-chat/core/contract'
import { createPushHub, type PushHub } from './push'
import type { SseStream } from './sse'
import { createInProcessRelay, type ExecutionRelay } from './relay'
import type { ExecutionRecord, RunRecord, ThreadRecord, ThreadScope } from './store/types'

export type { ExecutionRecord, RunRecord, ThreadRecord, ThreadScope } from './store/types'

/**
 * One message of a thread's server-side queue (the next-era flavor; next-era.md, "The queue in
 * detail"). Items stay after they leave the queue, so that a late edit or removal answers 409
 * (started) rather than 404.
 */
export interface QueueItemRecord {
  /** A numeric string (`^[1-9]\d*$`), unique in the store. */
  id: string
  message: string
  messageId?: string
  createdAt: string
  /**
   * `pending` waits its turn; `steering` is reserved for the running execution
   * (`steeringExecutionId`) and joins it at the agent's next pause; `started` was taken up by an
   * execution, `steered` joined one; `removed` was deleted (its `messageId` stays used).
   */
  state: 'pending' | 'steering' | 'started' | 'steered' | 'removed'
  steeringExecutionId: string | null
  /** The POST's stream, open until the item's execution ends (or it is steered or removed). */
  stream: SseStream
  /** The request's signal, for a flavor whose client cancels by leaving (none queues so). */
  signal?: AbortSignal
}

/** A thread's queue: its items in order (pending order is the order of `pending` items here). */
export interface ThreadQueue {
  items: QueueItemRecord[]
}

/**
 * The state that several mains share: threads, executions, suspended runs, the push hub and the
 * Stop relay. Two backends given the same store behave as two mains of one deployment.
 */
export interface PreviewChatStore {
  /** Keyed by `threadKey`: a thread id is only ever looked up within its owner's threads. */
  readonly threads: Map<string, ThreadRecord>
  readonly executions: Map<string, ExecutionRecord>
  readonly runs: Map<string, RunRecord>
  /**
   * The client message ids a thread accepted (`messageKey`), for the flavors that dedupe: "per
   * (agent, user, thread, messageId)".
   */
  readonly messageIds: Set<string>
  /** The server-side queues (next-era flavor), by `threadKey`. */
  readonly queues: Map<string, ThreadQueue>
  /** The last queue id given (queue ids are numeric strings, unique in the store). */
  queueSeq: number
  readonly push: PushHub
  readonly relay: ExecutionRelay
}

/**
 * The store key of a thread. Thread ids are the client's (it may mint them), so they are scoped to
 * their owner, project and agent: one user's ids can never be read, stopped, or claimed by
 * another, and naming another user's id answers exactly as naming an unknown one.
 */
export function threadKey(scope: ThreadScope, threadId: string): string {
  return JSON.stringify([scope.ownerId, scope.projectId, scope.agentId, threadId])
}

/** The key of one client message id in its thread (see `messageIds`). */
export function messageKey(thread: ThreadScope, threadId: string, messageId: string): string {
  return JSON.stringify([threadKey(thread, threadId), messageId])
}

export function createPreviewChatStore(): PreviewChatStore {
  return {
    threads: new Map(),
    executions: new Map(),
    runs: new Map(),
    messageIds: new Set(),
    queues: new Map(),
    queueSeq: 0,
    push: createPushHub(),
    relay: createInProcessRelay(),
  }
}

/** The history snapshot of a thread, as a deep copy ("Messages sort by creation"). */
export function snapshotOf(thread: ThreadRecord): HistorySnapshot {
  const messages = thread.messages
    .map((message, index) => ({ message, index }))
    .sort((a, b) => a.message.createdAt.localeCompare(b.message.createdAt) || a.index - b.index)
    .map(({ message }) => message)
  return structuredClone({
    messages,
    openSuspensions: thread.openSuspensions,
    activeExecutionId: thread.activeExecutionId,
  })
}
