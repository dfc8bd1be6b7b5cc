import type { TurnEvent } from '@preview-chat/core/contract'
import type { AgentOutcome } from '../agent'
import { loggedError } from '../log'
import type { SseStream } from '../sse'
import type { ExecutionEnd, ExecutionRecord, ThreadRecord } from '../store/types'
import type { TurnRecorder } from './recorder'
import type { AbortReason, ExecutionSettings } from './types'

/** How an execution ended: the agent's outcome, or why its abort signal fired. */
export type ExecutionOutcome =
  | AgentOutcome
  | { kind: AbortReason }
  /** The agent threw: the answer and the record say so generically, the log has `error`. */
  | { kind: 'crashed'; error: unknown }

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
 * Records the end of an execution in one store operation (its status on the record and on its
 * messages, its suspension's run, the thread free for the next turn), announces it, and only then
 * ends the live stream with the terminal event: "Recorded state determines completion".
 * Resolves to the ended record.
 */
export async function endExecution(
  settings: ExecutionSettings,
  ending: EndingExecution,
  outcome: ExecutionOutcome,
): Promise<ExecutionRecord> {
  const { execution, recorder, stream } = ending
  const { terminal, end } = terminalEvent(settings, ending, outcome)
  // The record's status is the execution's, not the fold's ending (`end()` in core's fold): a Stop
  // or a close ends the stream with `done`, which the fold ends as `success`, while the record says
  // `cancelled` or `interrupted` (no turn event carries those; docs/decisions/done-waits-for-the-
  // record.md). The fold gives the record its parts only, so of the terminal events only
  // `tool-call-suspended` is folded (for its tool call's `suspendPayload`).
  const ended = await recorder.end(end)
  ending.unregister()
  for (let extra = 1; extra < settings.rules.endAnnouncements; extra++) await recorder.announce()
  stream.send(terminal)
  stream.close()
  return ended ?? { ...execution, ...end }
}

/** The execution's final status (and what the outcome leaves behind), and its last event. */
function terminalEvent(
  settings: ExecutionSettings,
  { execution, thread, recorder }: EndingExecution,
  outcome: ExecutionOutcome,
): { terminal: TurnEvent; end: Omit<ExecutionEnd, 'messages'> } {
  const endTime = settings.now()
  const base = { executionId: execution.id, endedAt: new Date(endTime).toISOString() }
  const done: TurnEvent = { type: 'done', sessionId: thread.id, executionId: execution.id }
  switch (outcome.kind) {
    case 'done':
      return { terminal: done, end: { ...base, status: 'success' } }
    case 'suspended': {
      // "a turn that suspends ends as success", its tool call waiting with `suspendPayload`.
      const terminal: TurnEvent = { type: 'tool-call-suspended', payload: outcome.payload }
      recorder.fold(terminal)
      return { terminal, end: { ...base, status: 'success', suspension: outcome.payload } }
    }
    case 'error':
      return failed(base, outcome.message, outcome.errorCode)
    case 'crashed':
      settings.log({
        level: 'error',
        event: 'agent_crashed',
        mainId: settings.mainId,
        executionId: execution.id,
        threadId: thread.id,
        userId: thread.ownerId,
        error: loggedError(outcome.error),
      })
      return failed(base, 'The agent failed on this turn.', 'agent_crashed')
    case 'too_long':
      cancelOpenToolCalls(recorder, endTime)
      return failed(
        base,
        `The turn ran longer than ${settings.maxTurnMs} ms and was stopped.`,
        'turn_too_long',
      )
    case 'shutdown':
      cancelOpenToolCalls(recorder, endTime)
      return failed(base, 'The server shut down before the turn ended.', 'server_shutdown')
    case 'stop':
    case 'left':
    case 'close':
      cancelOpenToolCalls(recorder, endTime)
      // The live stream ends normally: "Recorded state determines completion".
      return {
        terminal: done,
        end: { ...base, status: outcome.kind === 'close' ? 'interrupted' : 'cancelled' },
      }
  }
}

/** An end as `error`, the same on the record and on the live stream. */
function failed(
  base: Pick<ExecutionEnd, 'executionId' | 'endedAt'>,
  message: string,
  errorCode: string,
): { terminal: TurnEvent; end: Omit<ExecutionEnd, 'messages'> } {
  return {
    terminal: { type: 'error', message, errorCode },
    end: { ...base, status: 'error', error: message, errorCode },
  }
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
