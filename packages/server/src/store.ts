import type {
  ExecutionStatus,
  HistorySnapshot,
  Message,
  SuspendedPayload,
  Suspension,
} from '@preview-chat/core/contract'
import { createPushHub, type PushHub } from './push'
import { createInProcessRelay, type ExecutionRelay } from './relay'

/** One preview thread. "A preview thread belongs to the user who started it." */
export interface ThreadRecord {
  id: string
  projectId: string
  agentId: string
  ownerId: string
  createdAt: string
  /** The recorded timeline: what a history read returns. */
  messages: Message[]
  openSuspensions: Suspension[]
  /** Set when an execution is recorded, before any output; null when none runs. */
  activeExecutionId: string | null
}

/** One execution: one turn, from a message or from a resume. */
export interface ExecutionRecord {
  id: string
  threadId: string
  projectId: string
  agentId: string
  ownerId: string
  /** The main that runs it, which alone can cancel it (others relay). */
  mainId: string
  kind: 'message' | 'resume'
  status: ExecutionStatus
  error?: string
  startedAt: string
  endedAt?: string
}

/** A suspended run, resumable through `.../chat/resume` or cancellable by `.../chat/runs/:runId`. */
export interface RunRecord {
  runId: string
  threadId: string
  /** The execution that suspended. */
  executionId: string
  /** With `threadId`, the run's thread (see `threadKey`): only its own route may name the run. */
  projectId: string
  agentId: string
  ownerId: string
  payload: SuspendedPayload
  state: 'open' | 'resumed' | 'cancelled'
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
  readonly push: PushHub
  readonly relay: ExecutionRelay
}

/** Where a thread lives: its owner, and the project and agent its path names. */
export interface ThreadScope {
  ownerId: string
  projectId: string
  agentId: string
}

/**
 * The store key of a thread. Thread ids are the client's (it may mint them), so they are scoped to
 * their owner, project and agent: one user's ids can never be read, stopped, or claimed by
 * another, and naming another user's id answers exactly as naming an unknown one.
 */
export function threadKey(scope: ThreadScope, threadId: string): string {
  return JSON.stringify([scope.ownerId, scope.projectId, scope.agentId, threadId])
}

export function createPreviewChatStore(): PreviewChatStore {
  return {
    threads: new Map(),
    executions: new Map(),
    runs: new Map(),
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
