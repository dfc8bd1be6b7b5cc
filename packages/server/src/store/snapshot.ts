import type { HistorySnapshot } from '@preview-chat/core/contract'
import type { ThreadRecord } from './types'

/** The history snapshot of a thread, as a deep copy ("Messages sort by creation"). */
export function snapshotOf(thread: ThreadRecord): HistorySnapshot {
  const messages = thread.messages
    .map((message, index) => ({ message, index }))
    // ISO 8601 times order as plain strings; `localeCompare` is ICU's: locale-dependent, and
    // slower by far on a long thread's n log n comparisons.
    .sort((a, b) => compareText(a.message.createdAt, b.message.createdAt) || a.index - b.index)
    .map(({ message }) => message)
  return structuredClone({
    messages,
    openSuspensions: thread.openSuspensions,
    activeExecutionId: thread.activeExecutionId,
  })
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
