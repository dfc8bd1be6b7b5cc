'use client'

import {
  createPreviewChatClient,
  ssePush,
  PreviewChatProvider,
  usePreviewChat,
  type Message,
} from '@preview-chat/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useEffect, useState, type KeyboardEvent } from 'react'

export const projectId = 'demo-project'
export const agentId = 'demo-agent'

const statusLabels = {
  idle: 'Live',
  submitting: 'Sending…',
  streaming: 'Live: streaming',
  recovering: 'Recovering…',
  following: 'Following the running turn',
  stopping: 'Stopping…',
} as const

export interface ChatProps {
  user: string
  threadId: string
  /** Minted by the page (`?new=1`): no first read, the first message creates the thread. */
  isNew: boolean
}

/** The client and the query cache of one user, made once per mount (keyed by user above). */
export function Chat({ user, threadId, isNew }: ChatProps) {
  const [{ client, queryClient }] = useState(() => ({
    // Server rendering creates this too: it touches no browser API until a session subscribes.
    client: createPreviewChatClient({
      baseUrl: '/rest',
      // The bearer header goes with every request; the push channel is SSE over fetch, which
      // carries it, through `rewrites()` like any response. (A WebSocket would reach the server
      // with the server's own Host and this page's Origin, which it refuses without `--cors`.)
      headers: { authorization: `Bearer ${user}` },
      push: ssePush(),
      scope: user,
    }),
    queryClient: new QueryClient(),
  }))
  return (
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>
        <Thread user={user} threadId={threadId} isNew={isNew} />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}

function textOf(message: Message): string {
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
}

function Thread({ user, threadId, isNew }: ChatProps) {
  const chat = usePreviewChat({ projectId, agentId, threadId, isNew })
  const started = chat.messages.length > 0
  useEffect(() => {
    // The thread exists now: a reload must read it (and follow its running turn).
    if (!isNew || !started) return
    const url = new URL(location.href)
    url.searchParams.delete('new')
    history.replaceState(history.state, '', url)
  }, [isNew, started])
  const send = () => {
    if (chat.canSubmit) void chat.submit()
  }
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      send()
    }
  }
  return (
    <main className="chat" aria-label="Chat">
      <p className="status-bar" role="status" data-testid="status" data-status={chat.status}>
        <span className="status-label">{statusLabels[chat.status]}</span> as {user}
      </p>
      {chat.error && (
        <p className="error" role="alert">
          {chat.error.message}{' '}
          <button type="button" onClick={chat.clearError}>
            Dismiss
          </button>
        </p>
      )}
      <section className="transcript" role="log" aria-label="Conversation" data-testid="transcript">
        {chat.messages.length === 0 ? (
          <p className="empty">
            {isNew || chat.notFound ? 'A new conversation: ' : 'No messages yet: '}
            your first message starts it. Try <code>/long 200</code>, then reload mid-answer.
          </p>
        ) : (
          chat.messages.map((message) => (
            <article
              key={message.id}
              className={`message message-${message.role}`}
              data-testid={`message-${message.role}`}
              data-execution-status={message.executionStatus}
            >
              <h2 className="message-author">{message.role === 'user' ? 'You' : 'Assistant'}</h2>
              <p className="part-text">{textOf(message)}</p>
            </article>
          ))
        )}
      </section>
      <form
        className="composer"
        aria-label="Composer"
        onSubmit={(event) => {
          event.preventDefault()
          send()
        }}
      >
        <label htmlFor="draft" className="visually-hidden">
          Message
        </label>
        <textarea
          id="draft"
          rows={3}
          value={chat.draft}
          placeholder="Type a message, or /long 200"
          onChange={(event) => chat.setDraft(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <div className="composer-actions">
          {chat.canStop && (
            <button type="button" onClick={() => void chat.stop()}>
              Stop
            </button>
          )}
          <button type="submit" disabled={!chat.canSubmit}>
            Send
          </button>
        </div>
      </form>
    </main>
  )
}
