/**
 * The in-memory store: the embedded default, and the reference the store suite is written
 * against. Each operation runs to its end without awaiting, so each is atomic among the mains of
 * one process; values are copied in and out, so nobody holds what the store keeps.
 */
import type { Message } from '@preview-chat/core/contract'
import type {
  ExecutionDraft,
  ExecutionEnd,
  ExecutionRecord,
  PreviewChatStore,
  QueueChange,
  QueueChangeResult,
  QueueItemRecord,
  RunRecord,
  ThreadKey,
  ThreadRecord,
  ThreadScope,
} from './types'

/** Everything a memory store holds, as plain data (what `exportState` gives and `importState` takes). */
export interface MemoryStoreState {
  /** By `threadKey`. */
  threads: [string, ThreadRecord][]
  executions: [string, ExecutionRecord][]
  runs: [string, RunRecord][]
  /** `messageKey`s of the client message ids the threads accepted. */
  messageIds: string[]
  /** By `threadKey`. */
  queues?: [string, QueueItemRecord[]][]
  queueSeq?: number
}

/** The in-memory store, which can also be written out and read back whole (the msw kit's reload). */
export interface MemoryStore extends PreviewChatStore {
  /** A copy of everything the store holds. */
  exportState(): MemoryStoreState
  /** Replaces everything the store holds with a copy of `state`. */
  importState(state: MemoryStoreState): void
}

/** The map key of a thread (owner, project, agent and id: see `ThreadKey`). */
export function threadKey(scope: ThreadScope, threadId: string): string {
  return JSON.stringify([scope.ownerId, scope.projectId, scope.agentId, threadId])
}

/** The key of one client message id in its thread. */
export function messageKey(scope: ThreadScope, threadId: string, messageId: string): string {
  return JSON.stringify([threadKey(scope, threadId), messageId])
}

/** The address of a record's thread. */
export const keyOf = (record: ThreadScope & { threadId?: string; id?: string }): ThreadKey => ({
  ownerId: record.ownerId,
  projectId: record.projectId,
  agentId: record.agentId,
  threadId: record.threadId ?? record.id ?? '',
})

interface State {
  threads: Map<string, ThreadRecord>
  executions: Map<string, ExecutionRecord>
  runs: Map<string, RunRecord>
  messageIds: Set<string>
  queues: Map<string, QueueItemRecord[]>
  queueSeq: number
  /** Each main's lease expiry (epoch ms, this process's clock: the one clock of its mains). */
  leases: Map<string, number>
}

const copy = <T>(value: T): T => structuredClone(value)
const mapKey = (key: ThreadKey) => threadKey(key, key.threadId)

/** Creates an empty in-memory store. */
export function createMemoryStore(): MemoryStore {
  const state: State = {
    threads: new Map(),
    executions: new Map(),
    runs: new Map(),
    messageIds: new Set(),
    queues: new Map(),
    queueSeq: 0,
    leases: new Map(),
  }
  const turns = turnOperations(state)
  return {
    ...turns,
    ...leaseOperations(state, turns.endExecution),
    ...runOperations(state),
    ...queueOperations(state),
    readThread: async (key) => copy(state.threads.get(mapKey(key))),
    hasMessageId: async (key, messageId) =>
      state.messageIds.has(messageKey(key, key.threadId, messageId)),
    readExecution: async (id) => copy(state.executions.get(id)),
    countRunning: async (ownerId) =>
      [...state.executions.values()].filter((e) => e.ownerId === ownerId && e.status === 'running')
        .length,
    listRunning: async (mainId) =>
      copy(
        [...state.executions.values()].filter((e) => e.mainId === mainId && e.status === 'running'),
      ),
    listThreads: async () => copy([...state.threads.values()]),
    listExecutions: async () => copy([...state.executions.values()]),
    exportState: () =>
      copy({
        threads: [...state.threads],
        executions: [...state.executions],
        runs: [...state.runs],
        messageIds: [...state.messageIds],
        queues: [...state.queues],
        queueSeq: state.queueSeq,
      }),
    importState(saved) {
      const value = copy(saved)
      state.threads = new Map(value.threads)
      state.executions = new Map(value.executions)
      state.runs = new Map(value.runs)
      state.messageIds = new Set(value.messageIds)
      state.queues = new Map(value.queues ?? [])
      state.queueSeq = value.queueSeq ?? 0
    },
  }
}

/** Why a new execution may not start now, if it may not. */
function refusal(
  state: State,
  thread: ThreadRecord,
  options: { exclusive: boolean; maxRunningPerOwner?: number | undefined },
): 'turn_already_running' | 'too_many_turns' | undefined {
  if (options.exclusive && thread.activeExecutionId !== null) return 'turn_already_running'
  if (options.maxRunningPerOwner === undefined) return undefined
  let count = 0
  for (const execution of state.executions.values()) {
    if (execution.ownerId === thread.ownerId && execution.status === 'running') count++
  }
  return count >= options.maxRunningPerOwner ? 'too_many_turns' : undefined
}

/** Records a running execution of `thread` and makes it the thread's active one. */
function recordExecution(state: State, thread: ThreadRecord, draft: ExecutionDraft) {
  const before = copy(thread)
  const execution: ExecutionRecord = {
    id: draft.id,
    threadId: thread.id,
    projectId: thread.projectId,
    agentId: thread.agentId,
    ownerId: thread.ownerId,
    mainId: draft.mainId,
    kind: draft.kind,
    status: 'running',
    startedAt: draft.startedAt,
  }
  state.executions.set(execution.id, execution)
  thread.activeExecutionId = execution.id
  return { ok: true as const, thread: before, execution: copy(execution) }
}

/** The thread of `key`, made empty when absent and `create`. */
function threadFor(state: State, key: ThreadKey, create: boolean, createdAt: string) {
  const found = state.threads.get(mapKey(key))
  if (found || !create) return found
  const thread: ThreadRecord = {
    id: key.threadId,
    projectId: key.projectId,
    agentId: key.agentId,
    ownerId: key.ownerId,
    createdAt,
    messages: [],
    openSuspensions: [],
    activeExecutionId: null,
  }
  state.threads.set(mapKey(key), thread)
  return thread
}

/** Each message replaces the thread's message of its id, or joins the end. */
function upsertMessages(thread: ThreadRecord, messages: readonly Message[]): void {
  for (const message of copy(messages)) {
    const at = thread.messages.findIndex((each) => each.id === message.id)
    if (at === -1) thread.messages.push(message)
    else thread.messages[at] = message
  }
}

function turnOperations(
  state: State,
): Pick<PreviewChatStore, 'admitTurn' | 'recordMessages' | 'endExecution'> {
  return {
    async admitTurn(admission) {
      const { thread: key, messageId } = admission
      const claim = messageId === undefined ? undefined : messageKey(key, key.threadId, messageId)
      if (claim !== undefined && state.messageIds.has(claim)) {
        return { ok: false, reason: 'duplicate_message' }
      }
      const existing = state.threads.get(mapKey(key))
      const thread =
        existing ?? threadFor(state, key, admission.create, admission.execution.startedAt)
      if (!thread) return { ok: false, reason: 'thread_not_found' }
      const refused = refusal(state, thread, admission)
      if (refused) {
        if (!existing) state.threads.delete(mapKey(key))
        return { ok: false, reason: refused }
      }
      if (claim !== undefined) state.messageIds.add(claim)
      return recordExecution(state, thread, admission.execution)
    },
    async recordMessages(executionId, messages) {
      const execution = state.executions.get(executionId)
      if (execution?.status !== 'running') return
      const thread = state.threads.get(threadKey(execution, execution.threadId))
      if (thread) upsertMessages(thread, messages)
    },
    async endExecution(end) {
      const execution = state.executions.get(end.executionId)
      if (execution?.status !== 'running') return undefined
      const thread = state.threads.get(threadKey(execution, execution.threadId))
      execution.status = end.status
      execution.endedAt = end.endedAt
      if (end.error !== undefined) execution.error = end.error
      if (end.errorCode !== undefined) execution.errorCode = end.errorCode
      if (!thread) return copy(execution)
      upsertMessages(thread, end.messages)
      for (const message of thread.messages) {
        if (message.executionId !== execution.id) continue
        message.executionStatus = end.status
        if (end.error !== undefined) message.executionError = end.error
      }
      if (end.suspension) openRun(state, execution, thread, end.suspension)
      if (thread.activeExecutionId === execution.id) thread.activeExecutionId = null
      return copy(execution)
    },
  }
}

function leaseOperations(
  state: State,
  endExecution: PreviewChatStore['endExecution'],
): Pick<PreviewChatStore, 'renewLease' | 'endOrphaned'> {
  return {
    async renewLease(mainId, ttlMs) {
      state.leases.set(mainId, Date.now() + ttlMs)
    },
    async endOrphaned({ error, errorCode }) {
      const now = Date.now()
      const orphans = [...state.executions.values()].filter(
        (execution) =>
          execution.status === 'running' && !((state.leases.get(execution.mainId) ?? 0) > now),
      )
      const endedAt = new Date(now).toISOString()
      const ended: ExecutionRecord[] = []
      for (const { id } of orphans) {
        const end = { executionId: id, status: 'error' as const, error, errorCode, endedAt }
        const record = await endExecution({ ...end, messages: [] })
        if (record) ended.push(record)
      }
      return ended
    },
  }
}

/** A suspended tool call becomes a run that can be resumed or cancelled, open in its thread. */
function openRun(
  state: State,
  execution: ExecutionRecord,
  thread: ThreadRecord,
  payload: NonNullable<ExecutionEnd['suspension']>,
): void {
  state.runs.set(payload.runId, {
    runId: payload.runId,
    threadId: thread.id,
    executionId: execution.id,
    projectId: thread.projectId,
    agentId: thread.agentId,
    ownerId: thread.ownerId,
    payload: copy(payload),
    state: 'open',
  })
  thread.openSuspensions.push({
    toolCallId: payload.toolCallId,
    runId: payload.runId,
    suspendPayload: copy(payload),
  })
}

/** A suspension that was resumed or cancelled is no longer open, nor waiting in its part. */
function closeSuspension(thread: ThreadRecord, runId: string, rejection?: string): void {
  const suspension = thread.openSuspensions.find((open) => open.runId === runId)
  thread.openSuspensions = thread.openSuspensions.filter((open) => open.runId !== runId)
  if (!suspension) return
  for (const message of thread.messages) {
    for (const part of message.content) {
      if (part.type !== 'tool-call' || part.toolCallId !== suspension.toolCallId) continue
      delete part.suspendPayload
      if (rejection !== undefined) {
        part.state = 'rejected'
        part.error = rejection
      }
    }
  }
}

/** The run of that id, if it is of `scope`. */
function scopedRun(state: State, runId: string, scope: ThreadScope): RunRecord | undefined {
  const run = state.runs.get(runId)
  if (!run) return undefined
  const own =
    run.ownerId === scope.ownerId &&
    run.projectId === scope.projectId &&
    run.agentId === scope.agentId
  return own ? run : undefined
}

function runOperations(
  state: State,
): Pick<PreviewChatStore, 'readRun' | 'resumeRun' | 'cancelRun'> {
  return {
    readRun: async (runId, scope) => copy(scopedRun(state, runId, scope)),
    async resumeRun(resumption) {
      const run = scopedRun(state, resumption.runId, resumption.scope)
      const thread = run && state.threads.get(threadKey(run, run.threadId))
      if (!run || !thread || run.payload.toolCallId !== resumption.toolCallId) {
        return { ok: false, reason: 'run_not_found' }
      }
      if (run.state !== 'open') return { ok: false, reason: 'run_closed', state: run.state }
      const refused = refusal(state, thread, resumption)
      if (refused) return { ok: false, reason: refused }
      run.state = 'resumed'
      closeSuspension(thread, run.runId)
      return recordExecution(state, thread, resumption.execution)
    },
    async cancelRun(runId, scope, rejection) {
      const run = scopedRun(state, runId, scope)
      if (!run || run.state !== 'open') return { run: copy(run), cancelled: false }
      run.state = 'cancelled'
      const thread = state.threads.get(threadKey(run, run.threadId))
      if (thread) closeSuspension(thread, runId, rejection)
      return { run: copy(run), cancelled: true }
    },
  }
}

/** The thread's queue, made empty on first use. */
function queueFor(state: State, key: ThreadKey): QueueItemRecord[] {
  let queue = state.queues.get(mapKey(key))
  if (!queue) state.queues.set(mapKey(key), (queue = []))
  return queue
}

function queueOperations(
  state: State,
): Pick<
  PreviewChatStore,
  'readQueue' | 'enqueue' | 'changeQueued' | 'takeUpNext' | 'takeSteers' | 'releaseSteers'
> {
  return {
    readQueue: async (key) => copy(state.queues.get(mapKey(key)) ?? []),
    async enqueue({ thread: key, create, message, messageId, createdAt }) {
      const claim = messageId === undefined ? undefined : messageKey(key, key.threadId, messageId)
      if (claim !== undefined && state.messageIds.has(claim)) {
        return { ok: false, reason: 'duplicate_message' }
      }
      if (!threadFor(state, key, create, createdAt))
        return { ok: false, reason: 'thread_not_found' }
      if (claim !== undefined) state.messageIds.add(claim)
      const item: QueueItemRecord = {
        id: String(++state.queueSeq),
        message,
        ...(messageId !== undefined && { messageId }),
        createdAt,
        state: 'pending',
        steeringExecutionId: null,
      }
      queueFor(state, key).push(item)
      return { ok: true, item: copy(item) }
    },
    changeQueued: async (key, queueId, change) => applyQueueChange(state, key, queueId, change),
    async takeUpNext(key, draft) {
      const thread = state.threads.get(mapKey(key))
      if (!thread || thread.activeExecutionId !== null || thread.openSuspensions.length > 0) {
        return undefined
      }
      const item = queueFor(state, key).find((each) => each.state === 'pending')
      if (!item) return undefined
      item.state = 'started'
      item.executionId = draft.id
      return { ...recordExecution(state, thread, draft), item: copy(item) }
    },
    async takeSteers(key, executionId) {
      const reserved = queueFor(state, key).filter(
        (item) => item.state === 'steering' && item.steeringExecutionId === executionId,
      )
      for (const item of reserved) {
        item.state = 'steered'
        item.executionId = executionId
      }
      return copy(reserved)
    },
    async releaseSteers(key, executionId) {
      let released = 0
      for (const item of queueFor(state, key)) {
        if (item.state !== 'steering' || item.steeringExecutionId !== executionId) continue
        item.state = 'pending'
        item.steeringExecutionId = null
        released++
      }
      return released
    },
  }
}

/** One change to a pending item (see `QueueChange`). */
function applyQueueChange(
  state: State,
  key: ThreadKey,
  queueId: string,
  change: QueueChange,
): QueueChangeResult {
  const queue = state.queues.get(mapKey(key)) ?? []
  const item = queue.find((each) => each.id === queueId)
  if (!item || item.state === 'removed') return { ok: false, reason: 'not_found' }
  const pendingOrder = queue.filter((each) => each.state === 'pending').map((each) => each.id)
  // A reorder names the order it saw; a stale one is refused before anything else.
  if (change.kind === 'reorder' && pendingOrder.join() !== change.expectedQueueIds.join()) {
    return { ok: false, reason: 'queue_changed' }
  }
  if (item.state === 'steering') return { ok: false, reason: 'steering' }
  if (item.state !== 'pending') return { ok: false, reason: 'started' }
  switch (change.kind) {
    case 'edit':
      item.message = change.message
      break
    case 'remove':
      item.state = 'removed'
      break
    case 'steer': {
      const thread = state.threads.get(mapKey(key))
      const active = thread?.activeExecutionId
      const execution = active ? state.executions.get(active) : undefined
      if (
        active !== change.executionId ||
        execution?.status !== 'running' ||
        execution.kind !== 'message'
      ) {
        return { ok: false, reason: 'not_steerable' }
      }
      item.state = 'steering'
      item.steeringExecutionId = change.executionId
      break
    }
    case 'reorder': {
      const to = pendingOrder.indexOf(change.targetQueueId)
      if (to === -1) return { ok: false, reason: 'target_not_queued' }
      const moved = pendingOrder.filter((id) => id !== item.id)
      moved.splice(to, 0, item.id)
      const byId = new Map(queue.map((entry) => [entry.id, entry]))
      const others = queue.filter((entry) => entry.state !== 'pending')
      state.queues.set(mapKey(key), [...others, ...moved.flatMap((id) => byId.get(id) ?? [])])
      break
    }
  }
  return { ok: true, item: copy(item) }
}
