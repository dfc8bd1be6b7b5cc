/**
 * What the released n8n 2.41 leaves out of a history snapshot, filled in (`releasedPlatform()`'s
 * `CompleteSnapshot`): a client for the spec's servers only carries none of it.
 */
import type { CompleteSnapshot, ExecutionStatus, Message } from './snapshot'

/**
 * A message's status is its execution's: the assistant message's, or `running` while the
 * execution has no assistant message yet (n8n 2.41 writes it with the first output). The active
 * execution is the last one whose assistant message is absent or running. `derived` says so to
 * the engine (a silent turn, the server's traits).
 */
export const completeReleasedSnapshot: CompleteSnapshot = (wire, reuse) => {
  const statusOf = new Map<string, ExecutionStatus>()
  for (const message of wire.messages)
    if (message.role === 'assistant' && message.executionStatus)
      statusOf.set(message.executionId, message.executionStatus)
  const made = reuse && (reuse.completed ??= new WeakMap())
  const messages = wire.messages.map((message): Message => {
    if (message.executionStatus) return message as Message
    const executionStatus = statusOf.get(message.executionId) ?? 'running'
    // The copy made last time, while its derived status holds (it keeps its identity).
    const copy = made?.get(message)
    if (copy?.executionStatus === executionStatus) return copy
    const completed = { ...message, executionStatus }
    made?.set(message, completed)
    return completed
  })
  const activeExecutionId =
    wire.activeExecutionId === undefined
      ? (messages.findLast((message) => message.executionStatus === 'running')?.executionId ?? null)
      : wire.activeExecutionId
  return { messages, openSuspensions: wire.openSuspensions, activeExecutionId, derived: true }
}
