import type { Message, PushMessage, SuspendedPayload, TurnEvent } from '@preview-chat/core/contract'
import {
  applyTurnEvent,
  recordedParts,
  startTurn,
  type LiveTurn,
  type TurnOptions,
} from '@preview-chat/core/internal'
import type { AgentInput, AgentOutcome, PreviewChatAgent } from './agent'
import type { TurnRules } from './flavor'
import type { Sleep } from './sleep'
import type { Timers } from '@preview-chat/core'
import { createSseStream, type SseStream } from './sse'
import type { ExecutionRecord, PreviewChatStore, ThreadRecord } from './store'

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
  /** A message turn records the person's text as `${executionId}:user`. */
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
  const { store, now } = settings
  const { thread } = start
  const executionId = settings.newExecutionId()
  const createdAt = new Date(now()).toISOString()
  const execution: ExecutionRecord = {
    id: executionId,
    threadId: thread.id,
    projectId: thread.projectId,
    agentId: thread.agentId,
    ownerId: thread.ownerId,
    mainId: settings.mainId,
    kind: start.kind,
    status: 'running',
    startedAt: createdAt,
  }
  store.executions.set(executionId, execution)

  const turnMessages: Message[] = []
  if (start.userText !== undefined) {
    turnMessages.push({
      id: `${executionId}:user`,
      role: 'user',
      content: [{ type: 'text', text: start.userText }],
      executionId,
      executionStatus: 'running',
      createdAt,
    })
  }
  const assistant: Message = {
    id: `${executionId}:assistant`,
    role: 'assistant',
    content: [],
    executionId,
    executionStatus: 'running',
    createdAt,
  }
  turnMessages.push(assistant)
  thread.activeExecutionId = executionId

  const controller = new AbortController()
  const { rules } = settings
  const leave = () => {
    if (!controller.signal.aborted) controller.abort('left' satisfies AbortReason)
  }
  const stream = createSseStream({
    pingMs: settings.pingMs,
    timers: settings.timers,
    ...(rules.cancelsOnClose && { onCancel: leave }),
  })
  if (rules.cancelsOnClose) start.signal?.addEventListener('abort', leave, { once: true })
  // The recorder is the client's fold of the same events ("one fold"): live and recorded views of
  // a turn cannot disagree. A resume completes the tool call of the execution it resumes.
  const fold: TurnOptions = { delegationCharLimit: settings.delegationCharLimit, now }
  let turn: LiveTurn = startTurn({
    executionId,
    sessionId: thread.id,
    createdAt,
    ...(start.resumes && {
      resumes: {
        toolCallId: start.resumes.toolCallId,
        toolName: start.resumes.toolName,
        input: start.resumes.input,
      },
    }),
  })
  let recordedContent = turn.assistant.content

  const push: PushMessage = {
    type: 'agentExecutionUpdated',
    data: {
      projectId: thread.projectId,
      agentId: thread.agentId,
      threadId: thread.id,
      executionId,
    },
  }
  // One recording: the latest retained timeline replaces the assistant message's parts, and every
  // tab of the owner hears of it ("It follows later agentExecutionUpdated notifications"). The
  // turn's messages join the thread's record with its first recording.
  let recorded = false
  const record = () => {
    if (!recorded) thread.messages.push(...turnMessages)
    recorded = true
    recordedContent = turn.assistant.content
    assistant.content = recordedParts(recordedContent)
    settings.onRecorded(executionId, execution.status)
    store.push.publish(thread.ownerId, structuredClone(push))
  }

  /** One event: folded into the record's timeline and sent to whoever reads the live stream. */
  const send = (event: TurnEvent) => {
    turn = applyTurnEvent(turn, event, fold)
    stream.send(event)
  }
  const emit = (event: TurnEvent) => {
    controller.signal.throwIfAborted()
    send(event)
  }

  let resolveFinished = () => {}
  const running: RunningExecution = {
    id: executionId,
    controller,
    stream,
    finished: new Promise<void>((resolve) => {
      resolveFinished = resolve
    }),
  }
  register(running)
  if (rules.announcesStart) {
    record()
    stream.send({ type: 'execution-started', executionId, sessionId: thread.id })
  }

  const finish = (outcome: AgentOutcome | { kind: AbortReason }) => {
    const endTime = now()
    let terminal: TurnEvent
    switch (outcome.kind) {
      case 'done':
        execution.status = 'success'
        terminal = { type: 'done', sessionId: thread.id, executionId }
        break
      case 'suspended': {
        // "a turn that suspends ends as success", its tool call waiting with `suspendPayload`.
        execution.status = 'success'
        const { payload } = outcome
        terminal = { type: 'tool-call-suspended', payload }
        turn = applyTurnEvent(turn, terminal, fold)
        store.runs.set(payload.runId, {
          runId: payload.runId,
          threadId: thread.id,
          executionId,
          ownerId: thread.ownerId,
          payload,
          state: 'open',
        })
        thread.openSuspensions.push({
          toolCallId: payload.toolCallId,
          runId: payload.runId,
          suspendPayload: payload,
        })
        break
      }
      case 'error':
        execution.status = 'error'
        execution.error = outcome.message
        terminal = { type: 'error', message: outcome.message, errorCode: outcome.errorCode }
        break
      case 'stop':
      case 'left':
      case 'close': {
        execution.status = outcome.kind === 'close' ? 'interrupted' : 'cancelled'
        // Tool calls still open end as cancelled, through the same events a client sees.
        for (const part of turn.assistant.content) {
          if (part.type !== 'tool-call' || part.state || part.suspendPayload) continue
          const { toolCallId, toolName } = part
          if (part.startTime !== undefined && part.endTime === undefined)
            send({ type: 'tool-execution-end', toolCallId, toolName, isError: true, endTime })
          send({ type: 'tool-result', toolCallId, toolName, output: null, canceled: true })
        }
        // The live stream ends normally: "Recorded state determines completion".
        terminal = { type: 'done', sessionId: thread.id, executionId }
        break
      }
    }
    execution.endedAt = new Date(endTime).toISOString()
    for (const message of turnMessages) {
      message.executionStatus = execution.status
      if (execution.error !== undefined) message.executionError = execution.error
    }
    if (thread.activeExecutionId === executionId) thread.activeExecutionId = null
    unregister(executionId)
    record()
    for (let extra = 1; extra < rules.endAnnouncements; extra++) {
      store.push.publish(thread.ownerId, structuredClone(push))
    }
    stream.send(terminal)
    stream.close()
  }

  const run = async () => {
    // "Snapshots are recorded in batches": a timer records what changed since the last one.
    let timer: unknown
    const batch = () => {
      if (!recorded || turn.assistant.content !== recordedContent) record()
      timer = settings.timers.setTimeout(batch, settings.snapshotMs)
    }
    timer = settings.timers.setTimeout(batch, settings.snapshotMs)
    let outcome: AgentOutcome | { kind: AbortReason }
    try {
      outcome = await settings.agent(start.input, {
        emit,
        pause: () => settings.sleep(settings.deltaMs, controller.signal),
        id: (prefix) => `${prefix}-${settings.newId()}`,
        now,
      })
      controller.signal.throwIfAborted()
    } catch (error) {
      outcome = controller.signal.aborted
        ? { kind: abortReason(controller.signal) }
        : {
            kind: 'error',
            message: `The agent crashed: ${error instanceof Error ? error.message : String(error)}`,
            errorCode: 'agent_crashed',
          }
    } finally {
      settings.timers.clearTimeout(timer)
    }
    finish(outcome)
  }
  run()
    .catch(() => undefined)
    .finally(resolveFinished)
  return running
}

function abortReason(signal: AbortSignal): AbortReason {
  const reason: unknown = signal.reason
  return reason === 'close' || reason === 'left' ? reason : 'stop'
}
