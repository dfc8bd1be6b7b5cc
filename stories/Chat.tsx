import { usePreviewChat } from '@preview-chat/react'

/** The smallest chat, for the msw kit's README example story (Example/Chat). */
export function Chat({ threadId }: { threadId: string }) {
  const chat = usePreviewChat({ projectId: 'demo-project', agentId: 'demo-agent', threadId })
  return (
    <ol aria-label="Conversation">
      {chat.messages.map((message) => (
        <li key={message.id}>
          {message.role}:{' '}
          {message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')}
        </li>
      ))}
    </ol>
  )
}
