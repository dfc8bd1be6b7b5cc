/**
 * A guide's chat, live in the docs page: the msw kit's reference backend runs in the page's
 * service worker (no server), kept in the page's sessionStorage across a reload
 * (`mountPersistentPreviewChat`), so a reload mid-answer finds the answer still there, and
 * growing. Mounted once per page load, for every live chat of the site; rendered in the browser
 * only (the site's static build renders its frame).
 */
import { mountPersistentPreviewChat } from '@preview-chat/msw/storybook'
import { createPreviewChatClient, type PreviewChatClient } from '@preview-chat/react'
import { QueryClient } from '@tanstack/react-query'
import { useEffect, useState, type ReactNode } from 'react'
import './live-chat.css'

/** What a guide's App gets: the page's clients and the example's thread. */
export interface LiveChatProps {
  /** The page's clients (none for an example that makes its own: `makeClient={null}`). */
  client: PreviewChatClient
  queryClient: QueryClient
  threadId: string
  isNew: boolean
}

let backend: Promise<unknown> | undefined

/** The backend of this page load: the scripted agent, a word every 60 ms. */
function mountBackend() {
  backend ??= mountPersistentPreviewChat({ deltaMs: 60, snapshotMs: 200 })
  return backend
}

/** The reference server's alice, as the guides' clients name her. */
export function aliceClient(): PreviewChatClient {
  return createPreviewChatClient({
    baseUrl: '/rest',
    headers: { authorization: 'Bearer alice' },
    scope: 'alice',
  })
}

/** This example's thread in this tab: kept across a reload, new after "New thread". */
function threadOf(name: string): { threadId: string; isNew: boolean } {
  const key = `preview-chat-docs:${name}:thread`
  const kept = sessionStorage.getItem(key)
  if (kept) return { threadId: kept, isNew: false }
  const threadId = crypto.randomUUID()
  sessionStorage.setItem(key, threadId)
  return { threadId, isNew: true }
}

export function LiveChat({
  name,
  makeClient = aliceClient,
  children,
}: {
  /** The example's name: its thread is kept under it. */
  name: string
  /** `null`: the example makes its own clients (then no read is started for it here). */
  makeClient?: (() => PreviewChatClient) | null
  children: (props: LiveChatProps) => ReactNode
}) {
  const [live, setLive] = useState<LiveChatProps | undefined>()
  const [failed, setFailed] = useState<string | undefined>()
  useEffect(() => {
    let cancelled = false
    mountBackend().then(
      () => {
        if (cancelled) return
        const { threadId, isNew } = threadOf(name)
        const queryClient = new QueryClient()
        const client = makeClient?.()
        // The read starts here with the clients the App is given: the one its session takes.
        if (client && !isNew)
          client.prefetch({
            projectId: 'demo-project',
            agentId: 'demo-agent',
            threadId,
            queryClient,
          })
        setLive({ client: client as PreviewChatClient, queryClient, threadId, isNew })
      },
      (error: unknown) => setFailed(error instanceof Error ? error.message : String(error)),
    )
    return () => {
      cancelled = true
    }
  }, [name, makeClient])
  const newThread = () => {
    sessionStorage.removeItem(`preview-chat-docs:${name}:thread`)
    location.reload()
  }
  return (
    <section className="live-chat" data-live-chat={name} aria-label="Live example">
      <header>
        <strong>Live</strong> — the reference backend runs in this page. Send <code>/long 60</code>,
        reload the page mid-answer, or open it in a second tab.{' '}
        <button type="button" onClick={newThread}>
          New thread
        </button>
      </header>
      {failed && <p role="alert">The in-page backend did not start: {failed}</p>}
      {live ? children(live) : !failed && <p>Starting the in-page backend…</p>}
    </section>
  )
}
