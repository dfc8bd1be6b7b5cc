import { isCancelledError, QueryObserver, type QueryClient } from '@tanstack/query-core'
import type { ParseResult } from '../wire/contract/result'
import type { HistorySnapshot } from '../wire/contract/snapshot'
import { failureRecord } from '../wire/contract/errors'
import type { EngineAction } from '../engine/model'
import { snapshotAction } from '../engine/reduce'

export interface HistoryQuery {
  /**
   * Starts a read now (the reducer's `read` command): through the observer while the session is
   * observed, else through TanStack's `fetchQuery` (a prefetch). Joins a fetch in flight.
   */
  read(): void
  /** Observes the query while the session is active; returns the function that stops. */
  observe(): () => void
  /** Cancels the read in flight (its request is aborted). */
  cancel(): void
  /** Stops reporting the cache's events (the session is disposed). */
  close(): void
}

/**
 * A thread's recorded history as a TanStack Query query. Every read runs through its `queryFn`, so
 * the cache, structural sharing (unchanged messages keep their identity), Devtools (the query shows
 * active while a session follows it) and the app's `invalidateQueries`, `refetchQueries` and
 * `setQueryData` all meet the one read path. It decides nothing: each thing the cache does is
 * reported to the reducer as an action —
 *
 * - the query function runs: `read-started`, tagged with this call's number (`fetch`);
 * - its fetch is aborted (`cancelQueries`, a replacing refetch, `resetQueries`): `read-cancelled`
 *   with that tag (the reducer tells a replaced fetch from the read it carries);
 * - the query is removed (`removeQueries`, `clear`, garbage collection): `read-cancelled` of
 *   whatever read it carried;
 * - data arrives (a read, the app's `setQueryData`): `snapshot`, checked first (the cache may hold
 *   anything); a read fails: `read-failed`.
 *
 * TanStack's own triggers (focus, reconnect, staleness) are off: the reducer decides when to read.
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
  const queryHash = JSON.stringify(queryKey)
  let fetches = 0
  const queryFn = async ({ signal }: { signal: AbortSignal }) => {
    const fetch = ++fetches
    // Reported only while the cache is listened to, where its end will be too: a refetch the app
    // starts while the session is quiet (`invalidateQueries({ refetchType: 'all' })`) left a read
    // in flight that no answer ever ended, and the session never read again.
    const heard = stopCache !== null
    if (heard) dispatch({ type: 'read-started', at: clock().at, fetch })
    try {
      return await options.fetch(signal)
    } finally {
      // Answers and failures are reported from the cache below, once the query itself has
      // settled, so that a read asked for at that moment starts afresh instead of joining this one.
      if (heard && signal.aborted) dispatch({ type: 'read-cancelled', fetch })
    }
  }
  const observerOptions = {
    queryKey,
    queryFn,
    ...(options.initialData && { initialData: options.initialData }),
    staleTime: Infinity,
    retry: false,
    // Offline is ours to handle (a failed read keeps the last state, retries, and the online
    // signal reads again); TanStack's default would pause the read without a word.
    networkMode: 'always' as const,
    refetchOnMount: false,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
  }
  let observer: QueryObserver<HistorySnapshot> | null = null
  let stopCache: (() => void) | null = null

  const failed = (cause: unknown) => {
    const { at, random } = clock()
    const error = failureRecord(cause, 'invalid_response', 'The history read failed')
    dispatch({ type: 'read-failed', error, at, random })
  }
  // What the cache last held: a read that answers with the very same object (the transport's 304)
  // brought nothing new, and the action says so.
  let held: unknown = queryClient.getQueryData(queryKey)
  const listen = () => {
    stopCache ??= queryClient.getQueryCache().subscribe((event) => {
      if (event.query.queryHash !== queryHash) return
      if (event.type === 'removed') return dispatch({ type: 'read-cancelled', fetch: null })
      if (event.type !== 'updated') return
      const { action } = event
      if (action.type === 'success') {
        const { data } = event.query.state
        const unchanged = data === held
        held = data
        const checked = options.check(data)
        if (checked.success)
          dispatch(
            snapshotAction(checked.value, action.manual ? 'app' : 'read', clock(), unchanged),
          )
        else failed(checked.error)
      } else if (action.type === 'error') {
        // A cancellation TanStack reports as an error is no failed read.
        if (isCancelledError(action.error)) dispatch({ type: 'read-cancelled', fetch: null })
        else failed(action.error)
      }
    })
  }

  return {
    read() {
      listen()
      if (observer) return void observer.refetch({ cancelRefetch: false })
      // TanStack Query's own prefetch, through this session's query function and cache entry.
      queryClient
        .fetchQuery({ queryKey, queryFn, retry: false, networkMode: 'always', staleTime: 0 })
        .catch(() => {
          // Reported from the cache's events.
        })
    },
    observe() {
      listen()
      // A fresh observer each time: the query it was built on may have been removed meanwhile
      // (a `clear()`, a garbage collection while nobody observed it).
      const current = new QueryObserver<HistorySnapshot>(queryClient, observerOptions)
      observer = current
      const stopObserver = current.subscribe(() => {})
      return () => {
        stopObserver()
        if (observer === current) observer = null
      }
    },
    cancel() {
      void queryClient.cancelQueries({ queryKey, exact: true })
    },
    close() {
      stopCache?.()
      stopCache = null
    },
  }
}
