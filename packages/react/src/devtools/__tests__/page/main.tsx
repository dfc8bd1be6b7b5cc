/**
 * The page `e2e/devtools.spec.ts` opens on a Vite dev server: a small chat and the devtools from
 * the default entry, which shows the panel because the dev server sets `NODE_ENV` to
 * `development`. `/rest` is proxied to the reference server.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState } from 'react'
import { createRoot } from 'react-dom/client'
import { createPreviewChatClient, PreviewChatProvider, usePreviewChat } from '../../../index'
import { PreviewChatDevtools } from '../../index'

const client = createPreviewChatClient({
  baseUrl: '/rest',
  headers: { authorization: 'Bearer alice' },
  scope: 'alice',
})

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
      <label>
        Message{' '}
        <textarea value={chat.draft} onChange={(event) => chat.setDraft(event.target.value)} />
      </label>
      <button disabled={!chat.canSubmit}>Send</button>
    </form>
  )
}

function App() {
  const [threadId] = useState(() => crypto.randomUUID())
  return (
    <QueryClientProvider client={new QueryClient()}>
      <PreviewChatProvider client={client}>
        <Chat threadId={threadId} />
        <PreviewChatDevtools position="bottom-right" />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}

const root = document.getElementById('root')
if (root) createRoot(root).render(<App />)
