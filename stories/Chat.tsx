import { usePreviewChat } from '@preview-chat/react'

/**
 * The smallest chat, for the msw kit's README example stories (Example/Chat): the transcript,
 * the session's status, a failed read's message, and a composer.
 */
export function Chat({ threadId, isNew = false }: { threadId: string; isNew?: boolean }) {
  const chat = usePreviewChat({ projectId: 'demo-project', agentId: 'demo-agent', threadId, isNew })
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        void chat.submit()
      }}
    >
      <p role="status">{chat.status}</p>
      {chat.readError && <p role="alert">{chat.readError.message}</p>}
      <ol aria-label="Conversation">
        {chat.messages.map((message) => (
          <li key={message.id}>
            {message.role}:{' '}
            {message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')}
          </li>
        ))}
      </ol>
      <textarea
        aria-label="Message"
        value={chat.draft}
        onChange={(event) => chat.setDraft(event.target.value)}
      />
      <button disabled={!chat.canSubmit}>Send</button>
    </form>
  )
}
