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

export function loadThreads(user: string): StoredThread[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(storageKey(user)) ?? '[]')
    return Array.isArray(parsed) ? (parsed as StoredThread[]) : []
  } catch {
    return []
  }
}

export function saveThreads(user: string, threads: StoredThread[]): void {
  localStorage.setItem(storageKey(user), JSON.stringify(threads))
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
      const next = change(loadThreads(user))
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

/** The thread id of the URL (`?thread=…`), so that a reload or another tab opens the same thread. */
export function readThreadFromUrl(): string | null {
  return new URLSearchParams(location.search).get('thread')
}

export function writeThreadToUrl(id: string, mode: 'push' | 'replace'): void {
  const url = new URL(location.href)
  url.searchParams.set('thread', id)
  if (mode === 'push') history.pushState(null, '', url)
  else history.replaceState(null, '', url)
}
