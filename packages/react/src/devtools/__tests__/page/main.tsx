/**
 * The page `e2e/devtools.spec.ts` opens on a Vite dev server: a small chat and the devtools from
 * the default entry, which shows the panel because the dev server sets `NODE_ENV` to
 * `development`. `/rest` is proxied to the reference server. Its composer sits at the foot of the
 * page, Send bottom-right, as in a chat; the devtools sit top-right, clear of it.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState, type CSSProperties } from 'react'
import { createRoot } from 'react-dom/client'
import { createPreviewChatClient, PreviewChatProvider, usePreviewChat } from '../../../index'
import { PreviewChatDevtools } from '../../index'

const client = createPreviewChatClient({
  baseUrl: '/rest',
  headers: { authorization: 'Bearer alice' },
  scope: 'alice',
})

const composer: CSSProperties = {
  position: 'fixed',
  bottom: 0,
  left: 0,
  right: 0,
  display: 'flex',
  gap: 8,
  padding: 8,
}

function Chat({ threadId }: { threadId: string }) {
  const chat = usePreviewChat({ projectId: 'p1', agentId: 'a1', threadId, isNew: true })
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        void chat.submit()
      }}
    >
      <h1>Chat</h1>
      <p>
        Status: <output>{chat.status}</output>
      </p>
      <ol>
        {chat.messages.map((message) => (
          <li key={message.id}>
            {message.role}:{' '}
            {message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')}
          </li>
        ))}
      </ol>
      {/* A chat's composer: at the foot of the page, Send bottom-right (where a phone's thumb is). */}
      <div style={composer}>
        <label style={{ flex: 1 }}>
          Message{' '}
          <textarea value={chat.draft} onChange={(event) => chat.setDraft(event.target.value)} />
        </label>
        <button disabled={!chat.canSubmit}>Send</button>
      </div>
    </form>
  )
}

function App() {
  const [threadId] = useState(() => crypto.randomUUID())
  return (
    <QueryClientProvider client={new QueryClient()}>
      <PreviewChatProvider client={client}>
        <Chat threadId={threadId} />
        {/* Top-right: the foot of the page is the composer's (see the README's `position`). */}
        <PreviewChatDevtools position="top-right" />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}

const root = document.getElementById('root')
if (root) createRoot(root).render(<App />)
