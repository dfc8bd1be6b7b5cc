import { QueryObserver, type QueryClient } from '@tanstack/query-core'
import type { HistorySnapshot } from './contract/snapshot'

/** What the history query reports to its session. */
export interface HistoryQueryEvents {
  /** A read began (whoever started it: the session's scheduler, or the app through TanStack Query). */
  started(): void
  failed(cause: unknown): void
  cancelled(): void
  /** A snapshot reached the cache: a read's answer (`fromRead`) or the app's `setQueryData`. */
  snapshot(snapshot: HistorySnapshot, fromRead: boolean): void
}

export interface HistoryQuery {
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
 * Its own triggers (focus, reconnect, staleness) are off: the session decides when to read.
 */
export function createHistoryQuery(options: {
  queryClient: QueryClient
  queryKey: readonly unknown[]
  fetch: (signal: AbortSignal) => Promise<HistorySnapshot>
  /** The snapshot of a thread known to be new, so that observing it reads nothing. */
  initialData?: HistorySnapshot
  events: HistoryQueryEvents
}): HistoryQuery {
  const { queryClient, queryKey, events } = options
  let observer: QueryObserver<HistorySnapshot> | null = null
  const queryObserver = () =>
    (observer ??= new QueryObserver<HistorySnapshot>(queryClient, {
      queryKey,
      queryFn: async ({ signal }) => {
        events.started()
        try {
          return await options.fetch(signal)
        } finally {
          // Cancelled for good (not replaced by a fresh fetch): no read runs any more. Failures
          // and answers are reported from the cache below, once the query itself has settled, so
          // that a read asked for at that moment starts afresh instead of joining the old one.
          const query = observer?.getCurrentQuery()
          if (signal.aborted && query?.state.fetchStatus === 'idle') events.cancelled()
        }
      },
      ...(options.initialData && { initialData: options.initialData }),
      staleTime: Number.POSITIVE_INFINITY,
      retry: false,
      // Offline is ours to handle (a failed read keeps the last state, retries, and the online
      // signal reads again); TanStack's default would pause the read without a word.
      networkMode: 'always',
      refetchOnMount: false,
      refetchOnWindowFocus: false,
      refetchOnReconnect: false,
    }))

  return {
    observe() {
      const current = queryObserver()
      const stopCache = queryClient.getQueryCache().subscribe((event) => {
        if (event.type !== 'updated' || event.query !== current.getCurrentQuery()) return
        const { action } = event
        const data = event.query.state.data as HistorySnapshot | undefined
        if (action.type === 'success' && data) events.snapshot(data, action.manual !== true)
        else if (action.type === 'error') events.failed(action.error)
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
