import type { SuspendedPayload, TurnEvent } from '@preview-chat/core/contract'
import type { AgentOutcome } from '../agent'
import type { SseStream } from '../sse'
import type { ExecutionRecord, ThreadRecord } from '../store'
import type { TurnRecorder } from './recorder'
import type { AbortReason, ExecutionSettings } from './types'

/** How an execution ended: the agent's outcome, or why its abort signal fired. */
export type ExecutionOutcome = AgentOutcome | { kind: AbortReason }

/** What the end of an execution updates. */
export interface EndingExecution {
  execution: ExecutionRecord
  thread: ThreadRecord
  recorder: TurnRecorder
  stream: SseStream
  /** Drops the execution from this main's running ones. */
  unregister: () => void
}

/**
 * Records the end of an execution: its status on the record and on its messages, the thread free
 * for the next turn, the last snapshot announced, then the terminal event ends the live stream.
 */
export function endExecution(
  settings: ExecutionSettings,
  ending: EndingExecution,
  outcome: ExecutionOutcome,
): void {
  const { execution, thread, recorder, stream } = ending
  const endTime = settings.now()
  const terminal = terminalEvent(settings, ending, outcome, endTime)
  execution.endedAt = new Date(endTime).toISOString()
  // The record's status is the execution's, not the fold's ending (`end()` in core's fold): a Stop
  // or a close ends the stream with `done`, which the fold ends as `success`, while the record says
  // `cancelled` or `interrupted` (no turn event carries those; docs/decisions/done-waits-for-the-
  // record.md). The fold gives the record its parts only, so of the terminal events only
  // `tool-call-suspended` is folded (for its tool call's `suspendPayload`).
  for (const message of recorder.messages) {
    message.executionStatus = execution.status
    if (execution.error !== undefined) message.executionError = execution.error
  }
  if (thread.activeExecutionId === execution.id) thread.activeExecutionId = null
  ending.unregister()
  recorder.record()
  for (let extra = 1; extra < settings.rules.endAnnouncements; extra++) recorder.announce()
  stream.send(terminal)
  stream.close()
}

/** Sets the execution's final status (and what the outcome leaves behind); returns its last event. */
function terminalEvent(
  settings: ExecutionSettings,
  { execution, thread, recorder }: EndingExecution,
  outcome: ExecutionOutcome,
  endTime: number,
): TurnEvent {
  const done: TurnEvent = { type: 'done', sessionId: thread.id, executionId: execution.id }
  switch (outcome.kind) {
    case 'done':
      execution.status = 'success'
      return done
    case 'suspended': {
      // "a turn that suspends ends as success", its tool call waiting with `suspendPayload`.
      execution.status = 'success'
      const terminal: TurnEvent = { type: 'tool-call-suspended', payload: outcome.payload }
      recorder.fold(terminal)
      openRun(settings, execution, thread, outcome.payload)
      return terminal
    }
    case 'error':
      execution.status = 'error'
      execution.error = outcome.message
      return { type: 'error', message: outcome.message, errorCode: outcome.errorCode }
    case 'stop':
    case 'left':
    case 'close':
      execution.status = outcome.kind === 'close' ? 'interrupted' : 'cancelled'
      cancelOpenToolCalls(recorder, endTime)
      // The live stream ends normally: "Recorded state determines completion".
      return done
  }
}

/** A suspended tool call becomes a run that can be resumed or cancelled, open in its thread. */
function openRun(
  settings: ExecutionSettings,
  execution: ExecutionRecord,
  thread: ThreadRecord,
  payload: SuspendedPayload,
): void {
  settings.store.runs.set(payload.runId, {
    runId: payload.runId,
    threadId: thread.id,
    executionId: execution.id,
    projectId: thread.projectId,
    agentId: thread.agentId,
    ownerId: thread.ownerId,
    payload,
    state: 'open',
  })
  thread.openSuspensions.push({
    toolCallId: payload.toolCallId,
    runId: payload.runId,
    suspendPayload: payload,
  })
}

/** Tool calls still open end as cancelled, through the same events a client sees. */
function cancelOpenToolCalls(recorder: TurnRecorder, endTime: number): void {
  for (const part of recorder.turn.assistant.content) {
    if (part.type !== 'tool-call' || part.state || part.suspendPayload) continue
    const { toolCallId, toolName } = part
    if (part.startTime !== undefined && part.endTime === undefined) {
      recorder.send({ type: 'tool-execution-end', toolCallId, toolName, isError: true, endTime })
    }
    recorder.send({ type: 'tool-result', toolCallId, toolName, output: null, canceled: true })
  }
}
