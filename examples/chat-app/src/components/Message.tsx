import type { Message, Suspension } from '@preview-chat/react'
import { memo } from 'react'
import { PartView, type MarkdownComponent, type SuspensionActions } from './parts'

const statusLabels: Record<Message['executionStatus'], string | null> = {
  running: 'Answering…',
  success: null,
  error: 'Failed',
  cancelled: 'Cancelled',
  interrupted: 'Interrupted',
}

/** Said under an answer that did not end by itself, so a cut answer never looks finished. */
const endNotes: Partial<Record<Message['executionStatus'], string>> = {
  cancelled: 'Stopped — the answer ends here.',
  interrupted: 'Interrupted — the server stopped before the answer was finished.',
}

export interface MessageViewProps {
  message: Message
  suspensions?: readonly Suspension[]
  onAnswer?: SuspensionActions['onAnswer']
  /** Renders the answer's text as markdown (given once it is near the viewport); else plain. */
  markdown?: MarkdownComponent | undefined
  /** Told the message's element while it waits for `markdown` (the transcript's observer). */
  watch?: ((element: HTMLElement, id: string) => () => void) | undefined
}

/**
 * One message: a person's text, or an assistant's parts with how its turn ended. Memoised: a
 * message whose object did not change (the record keeps unchanged messages' identity) is not
 * rendered again when another one streams.
 */
export const MessageView = memo(function MessageView({
  message,
  suspensions = [],
  onAnswer,
  markdown,
  watch,
}: MessageViewProps) {
  const waits = watch && message.role === 'assistant' && !markdown
  const label = message.role === 'assistant' ? statusLabels[message.executionStatus] : null
  return (
    <article
      ref={waits ? (element: HTMLElement) => watch(element, message.id) : undefined}
      className={`message message-${message.role}`}
      data-testid={`message-${message.role}`}
      data-execution-status={message.executionStatus}
      aria-label={message.role === 'user' ? 'You' : 'Assistant'}
    >
      <header className="message-author">
        {message.role === 'user' ? 'You' : 'Assistant'}
        {label && (
          <span className={`execution-status execution-${message.executionStatus}`}>{label}</span>
        )}
      </header>
      {message.content.map((part, index) => (
        <PartView
          key={index}
          part={part}
          message={message}
          suspensions={suspensions}
          onAnswer={onAnswer}
          markdown={message.role === 'assistant'}
          render={markdown}
        />
      ))}
      {message.executionError && (
        <p className="tool-error">The agent failed: {message.executionError}</p>
      )}
      {message.role === 'assistant' && endNotes[message.executionStatus] && (
        <p className="turn-end" role="note">
          {endNotes[message.executionStatus]}
        </p>
      )}
    </article>
  )
})
