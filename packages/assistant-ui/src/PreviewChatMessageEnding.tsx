import { useAuiState, type MessageStatus } from '@assistant-ui/react'

/**
 * How an answer ended, in words, when it did not simply finish: `Stopped`, `The agent failed:
 * …`, `Interrupted: …` (the server went away under it); `null` for one that runs, finished or
 * waits for a person.
 */
export function endingText(status: MessageStatus | undefined): string | null {
  if (status?.type !== 'incomplete') return null
  const detail = status.error === undefined ? '' : `: ${String(status.error)}`
  switch (status.reason) {
    case 'cancelled':
      return 'Stopped'
    case 'error':
      return `The agent failed${detail}`
    case 'length':
      return 'Cut short'
    default:
      return `Interrupted${detail}`
  }
}

/**
 * The ending of the message it is in (inside `MessagePrimitive.Root`), as `endingText` says, in a
 * `role="note"`; nothing for an answer that ran to its end.
 */
export function PreviewChatMessageEnding({ className }: { className?: string }) {
  const status = useAuiState((s) => s.message.status)
  const text = endingText(status)
  if (text === null) return null
  return (
    <p
      className={className}
      role="note"
      data-ending={status?.type === 'incomplete' ? status.reason : undefined}
    >
      {text}
    </p>
  )
}
