'use client'

import {
  createPreviewChatClient,
  PreviewChatProvider,
  ssePush,
  usePreviewChat,
  type Message,
} from '@preview-chat/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useEffect, useState } from 'react'

/** The ids the backend files threads under (one agent in this app). */
const projectId = 'own-backend'
const agentId = 'assistant'

export interface ChatProps {
  user: string
  threadId: string
  /** Minted by `/` (`?new=1`): nothing to read yet, the first message creates the thread. */
  isNew: boolean
}

/**
 * The chat of one signed-in user. `/rest` is this app's own route: the session cookie goes with
 * every request (and the SSE push stream) as with any same-origin fetch, so no header is set.
 */
export function Chat(props: ChatProps) {
  const [{ client, queryClient }] = useState(() => ({
    client: createPreviewChatClient({ baseUrl: '/rest', push: ssePush(), scope: props.user }),
    queryClient: new QueryClient(),
  }))
  return (
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>
        <Thread {...props} />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}

const textOf = (message: Message) =>
  message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')

function Thread({ threadId, isNew }: ChatProps) {
  const chat = usePreviewChat({ projectId, agentId, threadId, isNew })
  const started = chat.messages.length > 0
  useEffect(() => {
    // The thread exists now: a reload reads it, and follows its running turn.
    if (!isNew || !started) return
    const url = new URL(location.href)
    url.searchParams.delete('new')
    history.replaceState(history.state, '', url)
  }, [isNew, started])
  return (
    <main aria-label="Chat">
      <p role="status" data-testid="status" data-status={chat.status}>
        {chat.status}
      </p>
      {chat.error && <p role="alert">{chat.error.message}</p>}
      <section role="log" aria-label="Conversation">
        {chat.messages.map((message) => (
          <MessageView key={message.id} message={message} />
        ))}
      </section>
      <Composer chat={chat} />
    </main>
  )
}

function MessageView({ message }: { message: Message }) {
  return (
    <article
      className={`message message-${message.role}`}
      data-testid={`message-${message.role}`}
      data-execution-status={message.executionStatus}
    >
      <strong>{message.role === 'user' ? 'You' : 'Assistant'}</strong>
      <p className="part-text">{textOf(message)}</p>
    </article>
  )
}

/** The draft, Send (the gate: one turn at a time per thread) and Stop (any running turn). */
function Composer({ chat }: { chat: ReturnType<typeof usePreviewChat> }) {
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault()
        if (chat.canSubmit) void chat.submit()
      }}
    >
      <label htmlFor="draft" className="visually-hidden">
        Message
      </label>
      <textarea
        id="draft"
        rows={3}
        value={chat.draft}
        placeholder="Ask something"
        onChange={(event) => chat.setDraft(event.target.value)}
      />
      <button type="submit" disabled={!chat.canSubmit}>
        Send
      </button>
      {chat.canStop && (
        <button type="button" onClick={() => void chat.stop()}>
          Stop
        </button>
      )}
    </form>
  )
}
