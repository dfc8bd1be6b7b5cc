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
  ownerId: string
  payload: SuspendedPayload
  state: 'open' | 'resumed' | 'cancelled'
}

/**
 * The state that several mains share: threads, executions, suspended runs, the push hub and the
 * Stop relay. Two backends given the same store behave as two mains of one deployment.
 */
export interface PreviewChatStore {
  readonly threads: Map<string, ThreadRecord>
  readonly executions: Map<string, ExecutionRecord>
  readonly runs: Map<string, RunRecord>
  readonly push: PushHub
  readonly relay: ExecutionRelay
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
