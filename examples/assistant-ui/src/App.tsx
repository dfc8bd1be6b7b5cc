import { createPreviewChatClient, PreviewChatProvider } from '@preview-chat/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState } from 'react'
import { Chat } from './Chat'

// The reference server knows the browser's user by this cookie (the push WebSocket sends it too);
// its development users are alice, bob (may post) and carol (read only).
const user = document.cookie.match(/(?:^|;\s*)preview-chat-user=([^;]*)/)?.[1] ?? 'alice'
document.cookie = `preview-chat-user=${user}; path=/; SameSite=Lax`

const queryClient = new QueryClient()
const client = createPreviewChatClient({ baseUrl: '/rest', scope: user })

/** The thread in the URL (`?thread=`), or a new one minted here (then `isNew`: no first read). */
function threadFromUrl(): { threadId: string; isNew: boolean } {
  const url = new URL(location.href)
  const threadId = url.searchParams.get('thread')
  if (threadId) return { threadId, isNew: false }
  const minted = crypto.randomUUID()
  url.searchParams.set('thread', minted)
  history.replaceState(null, '', url)
  return { threadId: minted, isNew: true }
}

export function App() {
  const [thread, setThread] = useState(threadFromUrl)
  const newThread = () => {
    const url = new URL(location.href)
    url.searchParams.delete('thread')
    history.pushState(null, '', url)
    setThread(threadFromUrl())
  }
  return (
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>
        <header className="top">
          <h1>preview-chat × assistant-ui</h1>
          <span className="user">{decodeURIComponent(user)}</span>
          <button type="button" onClick={newThread}>
            New thread
          </button>
        </header>
        <Chat key={thread.threadId} {...thread} />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}
