/**
 * The root README's usage as a page (issue 30), rendering exactly the floor's markup (`floor.tsx`:
 * an `<ol>` of `<li>role: text</li>`), so that what differs from the floor is only the library:
 * `createPreviewChatClient` with its defaults (WebSocket push, the tab relay, the frame throttle),
 * a `QueryClient`, `PreviewChatProvider` and `usePreviewChat`; the cookie the floor sends. With
 * `?prefetch=1`, the README's `client.prefetch(key)` at module evaluation as well. Production build
 * by esbuild (`main.ts`).
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import {
  createPreviewChatClient,
  PreviewChatProvider,
  usePreviewChat,
  type Message,
} from '@preview-chat/react'
import { createRoot } from 'react-dom/client'

// The page's own code begins (every import evaluated): the bench's "read sent after the code".
performance.mark('bench:page')
const query = new URLSearchParams(location.search)
const thread = {
  projectId: 'demo-project',
  agentId: 'demo-agent',
  threadId: query.get('thread') ?? '',
}
const queryClient = new QueryClient()
const client = createPreviewChatClient({ baseUrl: '/rest' })
if (query.has('prefetch')) client.prefetch({ ...thread, queryClient })

function MessageText({ message }: { message: Message }) {
  const text = message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
  return (
    <li className="m">
      {message.role}: {text}
    </li>
  )
}

function Chat() {
  const chat = usePreviewChat(thread)
  // As the README does: the list once the record is known (the floor, too, has none before).
  return chat.loaded ? (
    <ol>
      {chat.messages.map((message) => (
        <MessageText key={message.id} message={message} />
      ))}
    </ol>
  ) : null
}

const root = document.getElementById('root')
if (!root) throw new Error('no #root')
createRoot(root).render(
  <QueryClientProvider client={queryClient}>
    <PreviewChatProvider client={client}>
      <Chat />
    </PreviewChatProvider>
  </QueryClientProvider>,
)
