import type { HistorySnapshot } from '@preview-chat/core/contract'
import type { ThreadRecord } from './types'

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
