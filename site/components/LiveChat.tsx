/**
 * A guide's chat, live in the docs page: the msw kit's reference backend runs in the page's
 * service worker (no server), kept in the page's sessionStorage across a reload
 * (`mountPersistentPreviewChat`), so a reload mid-answer finds the answer still there, and
 * growing. One tab hosts it for all the site's tabs (./shared-backend.ts) and the URL carries the
 * thread (`?thread=`), so the same address in a second tab follows the first. Mounted once per page load, for every live chat of the site; rendered in the browser
 * only (the site's static build renders its frame).
 */
import { createPreviewChatClient, type PreviewChatClient } from '@preview-chat/react'
import { QueryClient } from '@tanstack/react-query'
import { useEffect, useState, type ReactNode } from 'react'
import './live-chat.css'
import { mountSharedBackend } from './shared-backend'

/** What a guide's App gets: the page's clients and the example's thread. */
export interface LiveChatProps {
  /** The page's clients (none for an example that makes its own: `makeClient={null}`). */
  client: PreviewChatClient
  queryClient: QueryClient
  threadId: string
  isNew: boolean
}

/** The backend of the site's tabs: the scripted agent, a word every 60 ms (./shared-backend.ts). */
function mountBackend() {
  return mountSharedBackend({ deltaMs: 60, snapshotMs: 200 })
}

/** Whether the shared backend has the thread (nothing sent in it yet: no). */
async function known(id: string | null): Promise<boolean> {
  if (id === null) return false
  const response = await fetch(`/__docs/thread?id=${encodeURIComponent(id)}`)
  return ((await response.json()) as { exists: boolean }).exists
}

/** The reference server's alice, as the guides' clients name her. */
export function aliceClient(): PreviewChatClient {
  return createPreviewChatClient({
    baseUrl: '/rest',
    headers: { authorization: 'Bearer alice' },
    scope: 'alice',
  })
}

/** The example's thread in this tab, and a thread of the URL that this tab's backend lacks. */
interface Thread {
  threadId: string
  isNew: boolean
  /** The URL's `?thread=`, unknown here: the page was opened by hand, not from the tab that has it. */
  elsewhere?: string
}

/**
 * This example's thread: the URL's (`?thread=…`) when the backend has it, else the one kept in this
 * tab when the backend has it (across a reload, until "New thread"), else a new one (`isNew`: no
 * read asks for it). A thread with nothing sent in it is not kept: its id was followed here, so the
 * client would take an `isNew` for it as stale and read it, and the read answers 404 (a console
 * error on every reload of a page whose chat is still empty). The URL is then set to it: what a
 * second tab opened from this one needs.
 */
async function threadOf(name: string): Promise<Thread> {
  const key = `preview-chat-docs:${name}:thread`
  const url = new URL(location.href)
  const fromUrl = url.searchParams.get('thread')
  const kept = sessionStorage.getItem(key)
  const threadId =
    fromUrl !== null && (await known(fromUrl))
      ? fromUrl
      : kept !== null && kept !== fromUrl && (await known(kept))
        ? kept
        : null
  const id = threadId ?? crypto.randomUUID()
  sessionStorage.setItem(key, id)
  url.searchParams.set('thread', id)
  history.replaceState(history.state, '', url)
  return {
    threadId: id,
    isNew: threadId === null,
    // The URL's own empty thread, reloaded, is no other tab's: no note for it.
    ...(fromUrl !== null && fromUrl !== id && fromUrl !== kept && { elsewhere: fromUrl }),
  }
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
  const [live, setLive] = useState<LiveChatProps & { elsewhere?: string }>()
  const [failed, setFailed] = useState<string | undefined>()
  useEffect(() => {
    let cancelled = false
    mountBackend()
      .then(() => threadOf(name))
      .then(
        ({ threadId, isNew, elsewhere }) => {
          if (cancelled) return
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
          setLive({
            client: client as PreviewChatClient,
            queryClient,
            threadId,
            isNew,
            elsewhere,
          })
        },
        (error: unknown) => setFailed(error instanceof Error ? error.message : String(error)),
      )
    return () => {
      cancelled = true
    }
  }, [name, makeClient])
  const newThread = () => {
    sessionStorage.removeItem(`preview-chat-docs:${name}:thread`)
    const url = new URL(location.href)
    url.searchParams.delete('thread')
    location.assign(url)
  }
  return (
    <section className="live-chat" data-live-chat={name} aria-label="Live example">
      <header>
        <strong>Live</strong> — the reference backend runs in this browser (msw, no server), one for
        the site&apos;s tabs. Send <code>/long 60</code>, reload the page mid-answer, or open this
        page&apos;s address in a second tab: it follows the answer.{' '}
        <button type="button" onClick={newThread}>
          New thread
        </button>
      </header>
      {live?.elsewhere && (
        <p role="note">
          The in-page backend has no thread <code>{live.elsewhere}</code> (it lives in this browser,
          and is gone once its last tab closes): here is a new thread.
        </p>
      )}
      {failed && <p role="alert">The in-page backend did not start: {failed}</p>}
      {live ? children(live) : !failed && <p>Starting the in-page backend…</p>}
    </section>
  )
}
