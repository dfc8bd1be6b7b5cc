import type { Timers } from '@preview-chat/core'
import type { SuspendedPayload } from '@preview-chat/core/contract'
import type { AgentInput, PreviewChatAgent } from '../agent'
import type { TurnRules } from '../flavor'
import type { Sleep } from '../sleep'
import { createSseStream, type SseStream } from '../sse'
import type { ExecutionRecord, ThreadRecord, PreviewChatStore } from '../store'
import { endExecution } from './ending'
import { runAgent } from './loop'
import { createTurnRecorder } from './recorder'

/**
 * Why an execution's abort signal fired: a Stop, the backend closing, or the client leaving the
 * turn's stream under a flavor that cancels then.
 */
export type AbortReason = 'stop' | 'close' | 'left'

export interface ExecutionSettings {
  store: PreviewChatStore
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
  newExecutionId: () => string
  /** What the flavor decides about a turn. */
  rules: TurnRules
  /** Called after each recorded snapshot (for the inspection log). */
  onRecorded: (executionId: string, status: ExecutionRecord['status']) => void
}

export interface StartExecution {
  thread: ThreadRecord
  kind: ExecutionRecord['kind']
  input: AgentInput
  /** A message turn records the person's text as its user message (`recordedMessageId`). */
  userText?: string
  /** A resume completes the tool call that suspended in an earlier execution. */
  resumes?: SuspendedPayload
  /** The request's signal: its abort is the client leaving (see `TurnRules.cancelsOnClose`). */
  signal?: AbortSignal
}

/** A running execution, as its main holds it. */
export interface RunningExecution {
  id: string
  /** The cancellation handle: aborting it stops the agent at its next pause. */
  controller: AbortController
  /** Settles once the end is recorded. */
  finished: Promise<void>
  stream: SseStream
}

/**
 * Records a new execution, registers its cancellation handle, records the first snapshot and only
 * then writes `execution-started` ("The server records the execution and registers its
 * cancellation handle before it sends `execution-started`"). The agent then runs on its own: the
 * turn does not depend on anyone reading `stream` ("An accepted preview turn continues when its
 * browser connection closes").
 *
 * The flavor's `rules` can leave out the start (no first snapshot, no `execution-started`: the
 * first snapshot is then the first timer tick's) and make a client that leaves cancel the turn.
 */
export function startExecution(
  settings: ExecutionSettings,
  start: StartExecution,
  register: (running: RunningExecution) => void,
  unregister: (executionId: string) => void,
): RunningExecution {
  const { thread } = start
  const execution = recordExecution(settings, start)
  const controller = new AbortController()
  const stream = turnStream(settings, start, controller)
  const recorder = createTurnRecorder(settings, start, execution, stream)
  thread.activeExecutionId = execution.id

  let resolveFinished = () => {}
  const running: RunningExecution = {
    id: execution.id,
    controller,
    stream,
    finished: new Promise<void>((resolve) => {
      resolveFinished = resolve
    }),
  }
  register(running)
  if (settings.rules.announcesStart) {
    recorder.record()
    stream.send({ type: 'execution-started', executionId: execution.id, sessionId: thread.id })
  }
  const ending = { execution, thread, recorder, stream, unregister: () => unregister(execution.id) }
  runAgent(settings, start.input, recorder, controller)
    .then((outcome) => endExecution(settings, ending, outcome))
    .catch(() => undefined)
    .finally(resolveFinished)
  return running
}

/** The new execution's record, in the store from the start ("running"). */
function recordExecution(settings: ExecutionSettings, start: StartExecution): ExecutionRecord {
  const { thread } = start
  const execution: ExecutionRecord = {
    id: settings.newExecutionId(),
    threadId: thread.id,
    projectId: thread.projectId,
    agentId: thread.agentId,
    ownerId: thread.ownerId,
    mainId: settings.mainId,
    kind: start.kind,
    status: 'running',
    startedAt: new Date(settings.now()).toISOString(),
  }
  settings.store.executions.set(execution.id, execution)
  return execution
}

/**
 * The live stream of the turn. Under a flavor whose client cancels by leaving, its reader going
 * away (the stream cancelled, or the request aborted) aborts the execution as `left`.
 */
function turnStream(
  settings: ExecutionSettings,
  start: StartExecution,
  controller: AbortController,
): SseStream {
  const leave = () => {
    if (!controller.signal.aborted) controller.abort('left' satisfies AbortReason)
  }
  const { cancelsOnClose } = settings.rules
  const stream = createSseStream({
    pingMs: settings.pingMs,
    timers: settings.timers,
    ...(cancelsOnClose && { onCancel: leave }),
  })
  if (cancelsOnClose) start.signal?.addEventListener('abort', leave, { once: true })
  return stream
}
