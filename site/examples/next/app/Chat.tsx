'use client'

import { createPreviewChatClient, ssePush } from '@preview-chat/react'
import { QueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { App } from './App'

const projectId = 'demo-project'
const agentId = 'demo-agent'

/** The thread's chat: the App of Getting started (app/App.tsx) with this page's clients. */
export function Chat({ threadId, isNew }: { threadId: string; isNew: boolean }) {
  // Made once per page, never at module level: on the server a module outlives the request.
  const [{ client, queryClient }] = useState(() => {
    const clients = {
      client: createPreviewChatClient({
        baseUrl: '/rest',
        // The reference server's development users (alice, bob, carol). Your own backend reads
        // your session cookie instead, which goes with every request by itself.
        headers: { authorization: 'Bearer alice' },
        scope: 'alice',
        // The push channel over SSE: a response like any other, which `rewrites()` proxies (a
        // WebSocket it does not).
        push: ssePush(),
      }),
      queryClient: new QueryClient(),
    }
    // The read starts here, in the browser, before the first render takes the clients (a server
    // render has no session to give it to); a thread the page just minted has nothing to read.
    if (typeof window !== 'undefined' && !isNew)
      clients.client.prefetch({ projectId, agentId, threadId, queryClient: clients.queryClient })
    return clients
  })
  // The id is the thread's now: a reload reads it (and follows its running turn).
  useEffect(() => {
    if (isNew) history.replaceState(history.state, '', location.pathname)
  }, [isNew])
  return <App client={client} queryClient={queryClient} threadId={threadId} isNew={isNew} />
}
