import { pathSegmentIdProblem } from '@preview-chat/core/contract'
import { useCallback, useEffect, useState } from 'react'

/** A thread this browser knows for a user. `started`: its first message was sent. */
export interface StoredThread {
  id: string
  title: string
  started: boolean
  createdAt: number
}

// The reference server has no "list my threads" route, so the list lives in localStorage, per
// user; another tab sees changes through the `storage` event.
const storageKey = (user: string) => `preview-chat-example:threads:${user}`

/**
 * An id the client takes as a thread id, by the client's own rule (not `''`, `.` or `..`, which a
 * URL collapses; index.html's preload skips them too).
 */
export function isThreadId(id: unknown): id is string {
  return typeof id === 'string' && pathSegmentIdProblem(id) === null
}

/** One stored entry, checked: anything else (`null`, `{}`, a wrong type) is no thread. */
function isStoredThread(value: unknown): value is StoredThread {
  if (typeof value !== 'object' || value === null) return false
  const entry = value as Record<string, unknown>
  return (
    isThreadId(entry.id) &&
    typeof entry.title === 'string' &&
    typeof entry.started === 'boolean' &&
    typeof entry.createdAt === 'number' &&
    Number.isFinite(entry.createdAt)
  )
}

/**
 * The user's stored threads. localStorage is another tab's, an older version's or anyone's
 * writing: a list that is not one gives none, and each entry that is not a thread (or repeats an
 * id) is dropped.
 */
export function loadThreads(user: string): StoredThread[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(localStorage.getItem(storageKey(user)) ?? '[]')
  } catch {
    return []
  }
  if (!Array.isArray(parsed)) return []
  const seen = new Set<string>()
  return parsed.filter((entry: unknown): entry is StoredThread => {
    if (!isStoredThread(entry) || seen.has(entry.id)) return false
    seen.add(entry.id)
    return true
  })
}

/** Keeps the list; a storage that is full or refused keeps nothing, and the page goes on. */
export function saveThreads(user: string, threads: StoredThread[]): void {
  try {
    localStorage.setItem(storageKey(user), JSON.stringify(threads))
  } catch {
    // The list is a convenience of this demo: without it, the URL still names the thread.
  }
}

export function useStoredThreads(user: string) {
  const [threads, setThreads] = useState(() => loadThreads(user))
  const [loadedFor, setLoadedFor] = useState(user)
  if (loadedFor !== user) {
    setLoadedFor(user)
    setThreads(loadThreads(user))
  }

  useEffect(() => {
    const onStorage = (event: StorageEvent) => {
      if (event.key === storageKey(user)) setThreads(loadThreads(user))
    }
    addEventListener('storage', onStorage)
    return () => removeEventListener('storage', onStorage)
  }, [user])

  const update = useCallback(
    (change: (threads: StoredThread[]) => StoredThread[]) => {
      const stored = loadThreads(user)
      const next = change(stored)
      // Unchanged (`patch` of what is so already, as every thread's first read does): no write,
      // and no render of the app with a list equal to its own.
      if (next === stored) return
      saveThreads(user, next)
      setThreads(next)
    },
    [user],
  )

  const add = useCallback(
    (thread: StoredThread) => update((list) => [thread, ...list.filter((t) => t.id !== thread.id)]),
    [update],
  )
  const patch = useCallback(
    (id: string, changes: Partial<StoredThread>) =>
      update((list) => {
        const known = list.find((t) => t.id === id)
        if (!known)
          return [{ id, title: 'Untitled', started: true, createdAt: 0, ...changes }, ...list]
        if (Object.entries(changes).every(([k, v]) => known[k as keyof StoredThread] === v))
          return list
        return list.map((t) => (t.id === id ? { ...t, ...changes } : t))
      }),
    [update],
  )
  return { threads, add, patch }
}

/**
 * The thread id of the URL (`?thread=…`), so that a reload or another tab opens the same thread;
 * `null` for none, or for one the client refuses (`?thread=..`), which would throw.
 */
export function readThreadFromUrl(): string | null {
  const id = new URLSearchParams(location.search).get('thread')
  return isThreadId(id) ? id : null
}

export function writeThreadToUrl(id: string, mode: 'push' | 'replace'): void {
  const url = new URL(location.href)
  url.searchParams.set('thread', id)
  if (mode === 'push') history.pushState(null, '', url)
  else history.replaceState(null, '', url)
}
