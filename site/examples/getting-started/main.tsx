import { QueryClient } from '@tanstack/react-query'
import { createPreviewChatClient } from '@preview-chat/react'
import { createRoot } from 'react-dom/client'
import { App } from './App'

// The page's entry (a Vite SPA: this module runs once per page, in the browser only). One pair of
// clients for the page: the read started here is the one the App's session takes, with the same
// credentials. `/rest` is proxied to the server (Vite's `server.proxy`); the headers reach every
// request and the push channel; the reference server's users: alice, bob, carol.
const queryClient = new QueryClient()
const client = createPreviewChatClient({
  baseUrl: '/rest',
  headers: { authorization: 'Bearer alice' },
  scope: 'alice',
})

const params = new URLSearchParams(location.search)
const threadId = params.get('thread') ?? crypto.randomUUID()
const isNew = !params.has('thread')
if (isNew) history.replaceState(null, '', `?thread=${threadId}`)
// Start the thread's read with the page rather than with the first render.
else client.prefetch({ projectId: 'demo-project', agentId: 'demo-agent', threadId, queryClient })

const root = document.getElementById('root')
if (!root) throw new Error('The page has no #root element to render the chat into')
createRoot(root).render(
  <App client={client} queryClient={queryClient} threadId={threadId} isNew={isNew} />,
)
