import { QueryObserver, type QueryClient } from '@tanstack/query-core'
import type { ParseResult } from '../wire/contract/result'
import type { HistorySnapshot } from '../wire/contract/snapshot'
import { toPreviewChatError, type PreviewChatError } from '../wire/contract/errors'
import type { EngineAction } from '../engine/model'
import { snapshotAction } from '../engine/reduce'

export interface HistoryQuery {
  /**
   * Starts a read before the session is observed (`client.prefetch`): what it comes to is
   * `'pending'`, the snapshot it answered with and when it started, or `null` (none, or it failed).
   */
  prefetch(): void
  prefetched(): 'pending' | { snapshot: HistorySnapshot; startedAt: number } | null
  /** Observes the query while the session is active; returns the function that stops. */
  observe(): () => void
  /** Starts a read, or joins the one in flight. */
  read(): void
  /** Cancels the read in flight (its request is aborted). */
  cancel(): void
}

/**
 * A thread's recorded history as a TanStack Query query that the session observes. Every read
 * runs through its `queryFn`, so the cache, structural sharing (unchanged messages keep their
 * identity), Devtools (the query shows active while a session follows it) and the app's
 * `invalidateQueries`, `refetchQueries` and `setQueryData` all meet the one read path, and every
 * read is reported to the session's reducer. TanStack Query keeps one fetch in flight per query.
 * Its own triggers (focus, reconnect, staleness) are off: the session's scheduler decides.
 */
export function createHistoryQuery(options: {
  queryClient: QueryClient
  queryKey: readonly unknown[]
  fetch: (signal: AbortSignal) => Promise<HistorySnapshot>
  /** What the cache holds, checked: an app's setQueryData may have put anything there. */
  check(value: unknown): ParseResult<HistorySnapshot>
  /** The snapshot of a thread known to be new, so that observing it reads nothing. */
  initialData?: HistorySnapshot
  dispatch(action: EngineAction): void
  /** The clocks and randomness an action carries, so that the reducer stays pure. */
  clock(): { at: number; stampedAt: number; random: number }
}): HistoryQuery {
  const { queryClient, queryKey, dispatch, clock } = options
  let observer: QueryObserver<HistorySnapshot> | null = null
  const queryObserver = () =>
    (observer ??= new QueryObserver<HistorySnapshot>(queryClient, {
      queryKey,
      queryFn: async ({ signal }) => {
        dispatch({ type: 'read-started', at: clock().at })
        try {
          return await options.fetch(signal)
        } finally {
          // Cancelled for good (not replaced by a fresh fetch): no read runs any more. Failures
          // and answers are reported from the cache below, once the query itself has settled, so
          // that a read asked for at that moment starts afresh instead of joining the old one.
          const query = observer?.getCurrentQuery()
          if (signal.aborted && query?.state.fetchStatus === 'idle')
            dispatch({ type: 'read-cancelled' })
        }
      },
      ...(options.initialData && { initialData: options.initialData }),
      staleTime: Infinity,
      retry: false,
      // Offline is ours to handle (a failed read keeps the last state, retries, and the online
      // signal reads again); TanStack's default would pause the read without a word.
      networkMode: 'always',
      refetchOnMount: false,
      refetchOnWindowFocus: false,
      refetchOnReconnect: false,
    }))

  let prefetch: {
    state: 'pending' | 'failed' | 'done'
    data?: HistorySnapshot
    startedAt: number
  } | null = null
  return {
    prefetch() {
      if (prefetch) return
      const started = {
        state: 'pending' as 'pending' | 'failed' | 'done',
        data: undefined as HistorySnapshot | undefined,
        startedAt: clock().at,
      }
      prefetch = started
      // TanStack Query's own prefetch, through this session's query function and cache entry.
      queryClient
        .fetchQuery({
          queryKey,
          queryFn: ({ signal }) => options.fetch(signal),
          retry: false,
          networkMode: 'always',
        })
        .then(
          (data) => Object.assign(started, { state: 'done', data }),
          () => (started.state = 'failed'),
        )
    },
    prefetched() {
      const taken = prefetch
      prefetch = null
      if (!taken || taken.state === 'failed') return null
      if (taken.state === 'pending') return 'pending'
      return taken.data ? { snapshot: taken.data, startedAt: taken.startedAt } : null
    },
    observe() {
      const current = queryObserver()
      const stopCache = queryClient.getQueryCache().subscribe((event) => {
        if (event.type !== 'updated' || event.query !== current.getCurrentQuery()) return
        const { action } = event
        const failed = (error: PreviewChatError) => {
          const { at, random } = clock()
          dispatch({ type: 'read-failed', error, at, random })
        }
        if (action.type === 'success') {
          const checked = options.check(event.query.state.data)
          if (checked.success)
            dispatch(snapshotAction(checked.value, action.manual ? 'app' : 'read', clock()))
          else failed(checked.error)
        } else if (action.type === 'error')
          failed(toPreviewChatError(action.error, 'invalid_response', 'The history read failed'))
      })
      const stopObserver = current.subscribe(() => {})
      return () => {
        stopObserver()
        stopCache()
      }
    },
    read() {
      void queryObserver().refetch({ cancelRefetch: false })
    },
    cancel() {
      void queryClient.cancelQueries({ queryKey, exact: true })
    },
  }
}
