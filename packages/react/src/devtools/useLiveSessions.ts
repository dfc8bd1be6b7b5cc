import type { PreviewChatSession, ThreadKey } from '@preview-chat/core'
import { QueryClientContext, type QueryCache } from '@tanstack/react-query'
import { useCallback, useContext, useMemo, useSyncExternalStore } from 'react'
import { usePreviewChatClient } from '../PreviewChatProvider'

const SEPARATOR = '\u0000'

/**
 * The sessions the panel shows: every thread a session follows now, found in the query cache
 * (a followed session observes its history query, `client.queryKey(key)` = `['preview-chat',
 * scope, projectId, agentId, threadId, 'messages']`, of this client's scope only), and the
 * `threads` the app names. The sessions are the hooks' own:
 * the client hands out one per thread and query client, and the panel asks with the same query
 * client as `usePreviewChat` does.
 */
export function useLiveSessions(threads: readonly ThreadKey[] = []): PreviewChatSession[] {
  const client = usePreviewChatClient()
  const queryClient = useContext(QueryClientContext) ?? client.queryClient
  const cache = queryClient.getQueryCache()
  const subscribe = useCallback((onChange: () => void) => cache.subscribe(onChange), [cache])
  const followed = useSyncExternalStore(
    subscribe,
    () => followedThreads(cache, client.queryKey({ projectId: '', agentId: '', threadId: '' })),
    () => '',
  )
  const named = threads.map(threadId).join(SEPARATOR)
  return useMemo(() => {
    const ids = new Set([...named.split(SEPARATOR), ...followed.split(SEPARATOR)])
    ids.delete('')
    return [...ids].map((id) => {
      const [projectId = '', agentId = '', threadId = ''] = JSON.parse(id) as string[]
      return client.session({ projectId, agentId, threadId, queryClient })
    })
  }, [named, followed, client, queryClient])
}

function threadId(key: ThreadKey): string {
  return JSON.stringify([key.projectId, key.agentId, key.threadId])
}

/** The followed threads' ids, as one string (a stable snapshot for `useSyncExternalStore`). */
function followedThreads(cache: QueryCache, sample: readonly unknown[]): string {
  // The client's namespace and scope: another scope's sessions (another user's client) are not its.
  const [namespace, scope] = sample
  return cache
    .findAll({ queryKey: [namespace, scope] })
    .filter((query) => query.queryKey.at(-1) === 'messages' && query.getObserversCount() > 0)
    .map((query) => {
      const [, , projectId, agentId, id] = query.queryKey as string[]
      return threadId({ projectId: projectId ?? '', agentId: agentId ?? '', threadId: id ?? '' })
    })
    .sort()
    .join(SEPARATOR)
}
