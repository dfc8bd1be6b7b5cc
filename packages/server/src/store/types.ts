/**
 * The record of a preview-chat deployment, as an interface: what every main of a deployment reads
 * and writes, and nothing else (no streams, no signals, no functions: a running turn's handles stay
 * in the memory of the main that runs it). Every method is one atomic operation — a Postgres
 * implementation does each as one transaction — and every value crossing it is plain JSON-able
 * data that the caller may keep: a store never hands out, nor keeps, an object the caller holds.
 *
 * `createMemoryStore()` (`./memory`) is the embedded default; `describeStoreSuite` (`./suite`) pins
 * each operation's contract for any implementation.
 */
import type {
  ExecutionStatus,
  Message,
  SuspendedPayload,
  Suspension,
} from '@preview-chat/core/contract'

/** Where a thread lives: its owner, and the project and agent its path names. */
export interface ThreadScope {
  ownerId: string
  projectId: string
  agentId: string
}

/**
 * The address of one thread. Thread ids are the client's (it may mint them), so they are scoped to
 * their owner, project and agent: one user's ids can never be read, stopped, or claimed by
 * another, and naming another user's id answers exactly as naming an unknown one.
 */
export interface ThreadKey extends ThreadScope {
  threadId: string
}

/** One preview thread. "A preview thread belongs to the user who started it." */
export interface ThreadRecord {
  id: string
  projectId: string
  agentId: string
  ownerId: string
  createdAt: string
  /** The recorded timeline, in the order recorded (a history read sorts it by creation). */
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
  /** The main that runs it, which alone can cancel it (others relay through the bus). */
  mainId: string
  kind: 'message' | 'resume'
  status: ExecutionStatus
  /** Why it ended as `error`: a message fit for the user, never a stack or another's data. */
  error?: string
  /** The error's code (`agent_crashed`, `turn_too_long`, …) when it ended as `error`. */
  errorCode?: string
  startedAt: string
  endedAt?: string
}

/** A suspended run, resumable through `.../chat/resume` or cancellable by `.../chat/runs/:runId`. */
export interface RunRecord {
  runId: string
  threadId: string
  /** The execution that suspended. */
  executionId: string
  /** With `threadId`, the run's thread: only its own route may name the run. */
  projectId: string
  agentId: string
  ownerId: string
  payload: SuspendedPayload
  state: 'open' | 'resumed' | 'cancelled'
}

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
  /** The execution that took it up (`started`) or that it joined (`steered`). */
  executionId?: string
}

/** What the store needs to record a new execution; the rest comes from its thread. */
export interface ExecutionDraft {
  id: string
  /** The main that will run it. */
  mainId: string
  kind: ExecutionRecord['kind']
  startedAt: string
}

/** Why an admission was refused. */
export type AdmissionRefusal =
  /** The thread runs a turn (`activeExecutionId` is set) and the admission is exclusive. */
  | 'turn_already_running'
  /** No such thread, and the admission does not create it. */
  | 'thread_not_found'
  /** The thread accepted this client `messageId` before: nothing is recorded. */
  | 'duplicate_message'
  /** The owner runs `maxRunningPerOwner` executions already. */
  | 'too_many_turns'

/** `admitTurn`'s request: one message's turn. */
export interface TurnAdmission {
  thread: ThreadKey
  /** Creates the thread (empty, at `createdAt`) when there is none. */
  create: boolean
  /** Refuses while the thread runs a turn ("one turn at a time"); false for a flavor that races. */
  exclusive: boolean
  execution: ExecutionDraft
  /** The client's id of the message: claimed in the thread, refused when claimed before. */
  messageId?: string
  /** Refuses when the owner runs this many executions already (anywhere). */
  maxRunningPerOwner?: number
}

/** An admitted turn: the thread as it was before it (the agent's history) and the execution. */
export interface Admitted {
  ok: true
  thread: ThreadRecord
  execution: ExecutionRecord
}

export type AdmissionResult = Admitted | { ok: false; reason: AdmissionRefusal }

/** `endExecution`'s request: how an execution ended, and its final messages. */
export interface ExecutionEnd {
  executionId: string
  status: Exclude<ExecutionStatus, 'running'>
  error?: string
  errorCode?: string
  endedAt: string
  /**
   * The turn's messages as they end, recorded as `recordMessages` does; each message of the
   * execution (these and any recorded before) takes `status` (and `error`) as its
   * `executionStatus` (`executionError`).
   */
  messages: readonly Message[]
  /** The turn suspended: its run opens in the thread (resumable once, or cancellable). */
  suspension?: SuspendedPayload
}

/** How `endOrphaned` ends the executions of a main that lost its lease. */
export interface OrphanEnd {
  /** The executions' and their messages' error: a message fit for the user. */
  error: string
  /** Its code, e.g. `instance_lost`. */
  errorCode: string
}

/** `resumeRun`'s request: continue a suspended run in a new execution. */
export interface RunResumption {
  runId: string
  /** The route's thread scope: a run of another scope answers as an unknown one. */
  scope: ThreadScope
  toolCallId: string
  exclusive: boolean
  execution: ExecutionDraft
  maxRunningPerOwner?: number
}

export type ResumeResult =
  | Admitted
  | { ok: false; reason: 'run_not_found' | 'turn_already_running' | 'too_many_turns' }
  | { ok: false; reason: 'run_closed'; state: 'resumed' | 'cancelled' }

/** `cancelRun`'s answer: the run (undefined when unknown in the scope), and whether it closed now. */
export interface RunCancellation {
  run: RunRecord | undefined
  cancelled: boolean
}

/** A change to one queued item; each applies to a `pending` item only. */
export type QueueChange =
  | { kind: 'edit'; message: string }
  | { kind: 'remove' }
  /** Reserves the item for `executionId`, which must be the thread's active execution. */
  | { kind: 'steer'; executionId: string }
  /** Moves the item to `targetQueueId`'s place, if the pending order is `expectedQueueIds`. */
  | { kind: 'reorder'; targetQueueId: string; expectedQueueIds: readonly string[] }

export type QueueChangeResult =
  | { ok: true; item: QueueItemRecord }
  | {
      ok: false
      reason:
        | 'not_found'
        | 'steering'
        | 'started'
        | 'queue_changed'
        | 'target_not_queued'
        | 'not_steerable'
    }

/** `enqueue`'s request: a message committed to its thread's queue. */
export interface Enqueueing {
  thread: ThreadKey
  create: boolean
  message: string
  messageId?: string
  createdAt: string
}

export type EnqueueResult =
  | { ok: true; item: QueueItemRecord }
  | { ok: false; reason: 'thread_not_found' | 'duplicate_message' }

/** A queued item taken up: the execution now recorded for it, and the thread before it. */
export interface TakenUp extends Admitted {
  item: QueueItemRecord
}

/**
 * The record every main of a deployment shares. Each operation is atomic: two mains calling at
 * once see one after the other, never a half. Reads return copies.
 */
export interface PreviewChatStore {
  /** The thread (a copy), or undefined when its owner has none of that id in that scope. */
  readThread(key: ThreadKey): Promise<ThreadRecord | undefined>
  /** Whether the thread accepted the client `messageId` (for the flavors that dedupe). */
  hasMessageId(key: ThreadKey, messageId: string): Promise<boolean>
  /**
   * Admits one message's turn atomically: checks the `messageId` claim, finds (or creates) the
   * thread, refuses while it runs a turn (`exclusive`) or its owner runs `maxRunningPerOwner`,
   * then records the execution as `running`, claims the `messageId` and sets the thread's
   * `activeExecutionId`. Of two admissions at once for one thread, one wins.
   */
  admitTurn(admission: TurnAdmission): Promise<AdmissionResult>
  /**
   * Records a running turn's messages in its thread (a snapshot batch): each replaces the
   * thread's message of the same id, or joins the thread's messages at the end. Does nothing
   * when the execution is unknown or ended (a late batch never rewrites an ended turn).
   */
  recordMessages(executionId: string, messages: readonly Message[]): Promise<void>
  /**
   * Ends a running execution atomically: its status (and error), its messages (`end.messages`)
   * and their statuses, the suspension's run when it suspended, and the thread's
   * `activeExecutionId` cleared only if it is this execution. Resolves to the ended record, or
   * undefined (and changes nothing) when the execution is unknown or ended already.
   */
  endExecution(end: ExecutionEnd): Promise<ExecutionRecord | undefined>
  /** The execution (a copy), or undefined. */
  readExecution(executionId: string): Promise<ExecutionRecord | undefined>
  /** How many executions of `ownerId` run now, on every main (for the per-user limit). */
  countRunning(ownerId: string): Promise<number>
  /** The executions that main `mainId` runs, as recorded (what a surviving main may take over). */
  listRunning(mainId: string): Promise<ExecutionRecord[]>
  /**
   * Holds main `mainId`'s lease for `ttlMs` from now, by the store's own clock (the database's,
   * never a main's): a main renews it while it lives, more often than `ttlMs`.
   */
  renewLease(mainId: string, ttlMs: number): Promise<void>
  /**
   * Ends every running execution whose main holds no live lease (killed, cut off, or never held
   * one) as `endExecution` would, as `error` with `end.error` and `end.errorCode`, at the store's
   * own time: what was recorded stays, the messages take the status, the thread is free. Each
   * execution ends once, whichever mains sweep at once; resolves to those this call ended, for the
   * caller to tell their threads.
   */
  endOrphaned(end: OrphanEnd): Promise<ExecutionRecord[]>
  /** The run (a copy), if it is of `scope`; undefined for another scope's, as for an unknown one. */
  readRun(runId: string, scope: ThreadScope): Promise<RunRecord | undefined>
  /**
   * Resumes an open run atomically: the run becomes `resumed` (a run resumes once), its
   * suspension closes in the thread (its tool call loses `suspendPayload`), and the new
   * execution is admitted as `admitTurn` does.
   */
  resumeRun(resumption: RunResumption): Promise<ResumeResult>
  /**
   * Cancels an open run atomically: `cancelled`, its suspension closed and its tool call
   * `rejected` with `rejection`. `cancelled` is false when it was not open.
   */
  cancelRun(runId: string, scope: ThreadScope, rejection: string): Promise<RunCancellation>
  /** The thread's queue items in queue order, removed and taken ones included (copies). */
  readQueue(key: ThreadKey): Promise<QueueItemRecord[]>
  /**
   * Commits a message to its thread's queue as a `pending` item with a fresh id (checking and
   * claiming its `messageId`, creating the thread when `create`).
   */
  enqueue(enqueueing: Enqueueing): Promise<EnqueueResult>
  /** Applies one change to a pending item of the thread's queue, atomically. */
  changeQueued(key: ThreadKey, queueId: string, change: QueueChange): Promise<QueueChangeResult>
  /**
   * Takes up the thread's first pending item, atomically, where the thread is free (no active
   * execution, no open suspension): the item becomes `started` and its execution is admitted.
   * Undefined when the thread is busy or nothing waits.
   */
  takeUpNext(key: ThreadKey, execution: ExecutionDraft): Promise<TakenUp | undefined>
  /** The items reserved for `executionId` become `steered` (joined it); returns them in order. */
  takeSteers(key: ThreadKey, executionId: string): Promise<QueueItemRecord[]>
  /** Items still reserved for an ended `executionId` go back to `pending`; returns how many. */
  releaseSteers(key: ThreadKey, executionId: string): Promise<number>
  /** Every thread (copies): for inspection and tests, not for routes. */
  listThreads(): Promise<ThreadRecord[]>
  /** Every execution (copies): for inspection and tests, not for routes. */
  listExecutions(): Promise<ExecutionRecord[]>
}
