import {
  createPreviewChatClient,
  ssePush,
  PreviewChatProvider,
  type PreviewChatClient,
} from '@preview-chat/react'
import { persistTranscripts } from '@preview-chat/react/persist'
import { queue } from '@preview-chat/react/queue'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useCallback, useEffect, useMemo, useState } from 'react'
import { agentId, ChatView, projectId } from './ChatView'
import { ThreadList, UserPicker } from './components'
import {
  loadThreads,
  readThreadFromUrl,
  saveThreads,
  useStoredThreads,
  writeThreadToUrl,
} from './threads'
import {
  authMode,
  browserId,
  n8nMode,
  readUserCookie,
  users,
  writeN8nCookie,
  writeUserCookie,
} from './user'

let firstUser: string | null = null

/**
 * The page's user at its start, found once per page (the prefetch and the first render ask). The
 * cookie is written only when it does not say that user already: a write of `document.cookie`
 * goes to the browser process, and makes the next read a synchronous round trip there.
 */
function initialUser(): string {
  if (firstUser !== null) return firstUser
  if (authMode === 'bearer')
    return (firstUser = new URLSearchParams(location.search).get('user') ?? 'alice')
  const cookie = readUserCookie()
  const user = cookie ?? 'alice'
  if (cookie !== user) writeUserCookie(user)
  if (n8nMode) writeN8nCookie(user)
  return (firstUser = user)
}

/**
 * `?queue=1`: a message sent while a turn runs waits in the thread's queue, shared by the user's
 * tabs, and is sent once the thread is free (opt-in; see `@preview-chat/core/queue`); after Stop
 * it waits for "Send queued (N)". `?queue=keep`: `whenStopped: 'keep'`, so where the server has
 * its own queue (the reference server's `next-era` flavor) each message is handed to it as soon
 * as it is written, and Send now steers it into the running turn. Without either, the gate: Send
 * waits for the thread.
 */
const queueOption = () => {
  const mode = new URLSearchParams(location.search).get('queue')
  if (mode === null) return false
  return { queue: queue(mode === 'keep' ? { whenStopped: 'keep' } : {}) }
}

/** The client of `user`, as the server this page talks to wants it. */
function clientFor(user: string) {
  if (n8nMode)
    return createPreviewChatClient({
      baseUrl: '/rest',
      scope: user,
      headers: { 'browser-id': browserId() },
      pushUrl: `/rest/push?pushRef=${crypto.randomUUID()}`,
      push: ssePush(),
      ...queueOption(),
    })
  return createPreviewChatClient({
    baseUrl: '/rest',
    scope: user,
    ...queueOption(),
    ...(authMode === 'bearer' && { headers: { authorization: `Bearer ${user}` } }),
    // `?persist=1`: the transcript kept in the tab across a reload (opt-in; see the core README).
    ...(new URLSearchParams(location.search).has('persist') && { persist: persistTranscripts() }),
  })
}

const clients = new Map<string, { client: PreviewChatClient; queryClient: QueryClient }>()

/** The client and query cache of `user`, made once per page. */
function clientsOf(user: string) {
  let made = clients.get(user)
  if (!made) clients.set(user, (made = { client: clientFor(user), queryClient: new QueryClient() }))
  return made
}

let startup: string | null = null

/**
 * The thread to open first: the URL's (unless the client would refuse it, as `?thread=..`), else
 * the user's latest, else a new one (once per page).
 */
function startupThread(user: string): string {
  startup ??= readThreadFromUrl()
  if (startup) return startup
  const latest = loadThreads(user)[0]
  if (latest) startup = latest.id
  else {
    startup = crypto.randomUUID()
    saveThreads(user, [{ id: startup, title: 'New thread', started: false, createdAt: Date.now() }])
  }
  writeThreadToUrl(startup, 'replace')
  return startup
}

/**
 * Before React renders: the first thread's read goes out at once, as a route loader would start
 * it, and the session takes it as its first read (a new thread has nothing to read). Returns the
 * read's promise for the first render to wait on (`main.tsx`, with a cap), or `null` when there is
 * nothing worth waiting for: no read, or a transcript this tab kept (`?persist=1`) that shows at
 * once. It runs at the module's top level, where a throw is a blank page: the inputs are checked
 * on the way in (`readThreadFromUrl`, `loadThreads`), and a prefetch only saves time, so whatever
 * else goes wrong here is said and the page renders without it.
 */
export function prefetchFirstThread(): Promise<void> | null {
  try {
    const user = initialUser()
    const threadId = startupThread(user)
    if (loadThreads(user).find((t) => t.id === threadId)?.started === false) return null
    const { client, queryClient } = clientsOf(user)
    const thread = { projectId, agentId, threadId, queryClient }
    // Resolves once the read has ended, however; never rejects.
    const read = client.prefetch(thread)
    return client.session(thread).getState().loaded ? null : read
  } catch (error) {
    console.warn('The first thread could not be prefetched; it is read when it renders.', error)
    return null
  }
}

export function App() {
  const [user, setUser] = useState(initialUser)
  const [threadId, setThreadId] = useState(() => startupThread(user))
  const { threads, add, patch } = useStoredThreads(user)

  // One client per user: `scope` keeps drafts and the tab relay apart, and its push channel
  // connects as this user (the WebSocket with the cookie; SSE with the bearer header).
  const { client, queryClient } = useMemo(() => clientsOf(user), [user])

  const newThread = useCallback(() => {
    const id = crypto.randomUUID()
    add({ id, title: 'New thread', started: false, createdAt: Date.now() })
    writeThreadToUrl(id, 'push')
    setThreadId(id)
  }, [add])

  useEffect(() => {
    const onPopState = () => {
      const id = readThreadFromUrl()
      if (id) setThreadId(id)
    }
    addEventListener('popstate', onPopState)
    return () => removeEventListener('popstate', onPopState)
  }, [])

  const selectThread = (id: string) => {
    writeThreadToUrl(id, 'push')
    setThreadId(id)
  }
  const changeUser = (next: string) => {
    if (authMode === 'bearer') {
      const url = new URL(location.href)
      url.searchParams.set('user', next)
      history.replaceState(null, '', url)
    } else writeUserCookie(next)
    if (n8nMode) writeN8nCookie(next)
    setUser(next)
  }
  const onStarted = useCallback(
    (title: string) => {
      // The first message names the thread.
      const known = loadThreads(user).find((t) => t.id === threadId)
      patch(threadId, known?.started ? {} : { started: true, title })
    },
    [user, threadId, patch],
  )

  const stored = threads.find((t) => t.id === threadId)
  return (
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>
        <div className="app">
          <header className="app-header">
            <h1>preview-chat</h1>
            <UserPicker users={users} user={user} onChange={changeUser} />
          </header>
          <ThreadList
            threads={threads}
            activeId={threadId}
            onSelect={selectThread}
            onNew={newThread}
          />
          {threadId && (
            <ChatView
              key={`${user}:${threadId}`}
              user={user}
              threadId={threadId}
              isNew={stored ? !stored.started : false}
              onStarted={onStarted}
            />
          )}
        </div>
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}
