/**
 * The shapes one execution's files share (`start`, `loop`, `recorder`, `ending`), and the context
 * that holds running executions: a leaf module, so that none of those files imports another's
 * types back (issue 27, row m: they formed one import circle with `context` and `threads`).
 */
import type { Timers } from '@preview-chat/core'
import type { Message, SuspendedPayload } from '@preview-chat/core/contract'
import type { AgentInput, PreviewChatAgent } from '../agent'
import type { TurnRules } from '../flavor/types'
import type { PreviewChatLogger } from '../log'
import type { Sleep } from '../sleep'
import type { SseStream } from '../sse'
import type { PreviewChatBus } from '../bus/types'
import type { ExecutionRecord, PreviewChatStore, ThreadRecord } from '../store/types'

/**
 * Why an execution's abort signal fired: a Stop, the backend closing, or the client leaving the
 * turn's stream under a flavor that cancels then.
 */
export type AbortReason = 'stop' | 'close' | 'left' | 'too_long' | 'shutdown'

export interface ExecutionSettings {
  store: PreviewChatStore
  bus: PreviewChatBus
  mainId: string
  agent: PreviewChatAgent
  sleep: Sleep
  deltaMs: number
  snapshotMs: number
  delegationCharLimit: number
  pingMs: number
  now: () => number
  /** The timers of the snapshot loop and the SSE ping (injected, like the agent's sleep). */
  timers: Timers
  /** Ids of the agent's streams, tool calls and runs. */
  newId: () => string
  /** What the flavor decides about a turn. */
  rules: TurnRules
  /** Called after each recorded snapshot (for the inspection log). */
  onRecorded: (executionId: string, status: ExecutionRecord['status']) => void
  /**
   * Called once an execution's end is recorded and its stream closed: a flavor with a queue takes
   * up the thread's next message then.
   */
  onEnded?: (thread: ThreadRecord, execution: ExecutionRecord) => Promise<void>
  /** Called at each pause of the agent, before it sleeps: a flavor with a queue lets steers in. */
  onPause?: (thread: ThreadRecord, executionId: string, recorder: TurnInputs) => Promise<void>
  /** Hears what failed without an answer to carry it (a store write of a running turn). */
  onFailure: (event: string, execution: ExecutionRecord, error: unknown) => void
  /** The structured log (`turn_started`, `turn_ended`, `agent_crashed`, …). */
  log: PreviewChatLogger
  /** A turn running longer ends as `error` (`turn_too_long`). */
  maxTurnMs?: number
}

/** What a pause may add to a running turn: a person's message, recorded in its execution. */
export interface TurnInputs {
  /** Records `message` as a user message of the execution (its status follows the execution's). */
  addInput(message: Message): Promise<void>
}

export interface StartExecution {
  /** The thread as it was before the turn was admitted (its messages: the agent's history). */
  thread: ThreadRecord
  /** The execution the store admitted (running, active in the thread). */
  execution: ExecutionRecord
  input: AgentInput
  /** A message turn records the person's text as its user message (`recordedMessageId`). */
  userText?: string
  /** A resume completes the tool call that suspended in an earlier execution. */
  resumes?: SuspendedPayload
  /** The request's signal: its abort is the client leaving (see `TurnRules.cancelsOnClose`). */
  signal?: AbortSignal
  /** The client's id of the message, kept on its recorded user message (flavors that dedupe). */
  messageId?: string
  /**
   * `execution-started` carries `inputMessageIds` (next-era): the message's `messageId`, or the
   * id the record gives it when the client sent none.
   */
  announcesInputs?: true
  /** The stream to write the turn to (a queued message's POST, open since `message-queued`). */
  stream?: SseStream
}

/** A running execution, as its main holds it. */
export interface RunningExecution {
  id: string
  /** The cancellation handle: aborting it stops the agent at its next pause. */
  controller: AbortController
  /**
   * Set once the outcome is known and its end is being recorded: a Stop is no longer accepted
   * ("false when that execution is not running any more"), as the record will not say cancelled.
   */
  ending: boolean
  /** Settles once the start is recorded and announced (`execution-started`, where the flavor sends it). */
  started: Promise<void>
  /** Settles once the end is recorded. */
  finished: Promise<void>
  stream: SseStream
}
