import type { QueryClient } from '@tanstack/query-core'
import type { LiveTurn } from '../engine/fold'
import { parseLiveTurn } from '../engine/relay'
import {
  defaultDraftStorage,
  defaultTimers,
  type DraftStorage,
  type Timers,
} from '../platform/environment'
import { onPageHide } from '../platform/pageHide'
import { parseHistorySnapshot } from '../wire/contract/snapshot'
import { describeValue } from '../wire/contract/errors'

/** The options of `persistTranscripts`. */
export interface PersistTranscriptsOptions {
  /**
   * Where the transcripts are kept. Default `sessionStorage`: tab-local, gone when the tab closes
   * (`localStorage` would keep them across tabs and restarts, on this device, for anyone who opens
   * the browser).
   */
  storage?: DraftStorage | null
  /** The most characters kept per scope; the threads read longest ago go first. Default 2,000,000. */
  maxChars?: number
  /** The shortest time between two writes (ms). Default 1,000 for transcripts, 250 for live text. */
  throttleMs?: number
}

/**
 * How a client keeps recorded transcripts (and the live text of a running turn) across a reload:
 * what `createPreviewChatClient({ persist })` takes. Made by `persistTranscripts()`.
 */
export interface TranscriptPersistence {
  /**
   * Restores `scope`'s kept transcripts into `queryClient` (at once), then keeps them in step:
   * only the queries of that scope (`historyQueryKey(key, scope)`), never another scope's that
   * share the query client. Returns the function that stops the writes (the client's `dispose()`).
   */
  attach(
    queryClient: QueryClient,
    scope: string,
    timers: Timers,
    warn: (message: string) => void,
  ): () => void
  /** The live turn kept for a thread (checked), or `null`. */
  keptLive(scope: string, threadId: string): LiveTurn | null
  /** Keeps (or with `null` forgets) a thread's live turn; written throttled and when the page hides. */
  keepLive(scope: string, threadId: string, turn: LiveTurn | null): void
  /**
   * Whether `data` (a thread's value in the query cache) is a transcript this persistence
   * restored: a server render did not have it, so the hydration snapshot leaves it out.
   */
  isKept?(data: unknown): boolean
  /**
   * Forgets what was kept of the thread under `queryKey` (the reducer's `forget-kept`: a read
   * said it is not found, or not this user's), until a read brings it back.
   */
  forget?(queryClient: QueryClient, queryKey: readonly unknown[]): void
}

// 2: the query key carries the scope (`historyQueryKey(key, scope)`); version 1 kept none.
const VERSION = 2
const transcriptsKey = (scope: string) => `preview-chat:transcripts:${scope}`
const liveKey = (scope: string, threadId: string) => `preview-chat:live:${scope}:${threadId}`
/** A query of one scope's client (`historyQueryKey(key, scope)`). */
const ofScope = (queryKey: readonly unknown[], scope: string) =>
  queryKey[0] === 'preview-chat' && queryKey[1] === scope

interface Kept {
  v: typeof VERSION
  threads: { queryKey: unknown[]; data: unknown; updatedAt: number }[]
}

/**
 * Keeps the recorded transcripts of a client's threads in the tab's storage, so that after a
 * reload the transcript is on screen in the first render — shown as `recovering` until the first
 * read confirms or replaces it — and a running answer's live text stands until a record covers
 * it. A read that answers 404 or 403 forgets the thread. Writes are throttled, done from a timer
 * (never in the path of a keystroke or a delta), bounded by `maxChars`, and flushed when the page
 * hides. Privacy: the transcript sits in the tab's storage in plain text until the tab closes (or
 * the read of a thread the user may no longer see); scope the client by user (`scope`).
 *
 * It uses TanStack Query's cache (its `findAll`, `setQueryData` and cache events) rather than
 * `@tanstack/query-persist-client-core`, whose releases pin an older `@tanstack/query-core` than
 * the one this package works with: an app would bundle two copies of it.
 */
export function persistTranscripts(options: PersistTranscriptsOptions = {}): TranscriptPersistence {
  const storage = options.storage === undefined ? defaultDraftStorage() : options.storage
  const maxChars = options.maxChars ?? 2_000_000
  /** Scopes attached per query client: each writes its own scope's queries only. */
  const attached = new WeakMap<QueryClient, Set<string>>()
  const pendingLive = new Map<string, LiveTurn | null>()
  const restored = new WeakSet<object>()
  /** Queries whose thread a read said is gone (the reducer's rule): not written while so. */
  const forgotten = new WeakSet<object>()
  let liveTimer: unknown = null
  let clock: Timers = defaultTimers
  let report: (message: string) => void = () => {}

  /** `value` is made inside the guard: a value JSON cannot hold is a write that failed. */
  const write = (key: string, make: (() => string | null) | null) => {
    try {
      const value = make?.() ?? null
      if (value === null || value.length > maxChars) storage?.removeItem(key)
      else storage?.setItem(key, value)
    } catch (cause) {
      // Full or refused: nothing stale may stay behind.
      report(`A transcript could not be kept for a reload (${describeValue(cause)}).`)
      try {
        storage?.removeItem(key)
      } catch {
        // The storage refuses everything: nothing is kept.
      }
    }
  }
  const read = (key: string): unknown => {
    try {
      const text = storage?.getItem(key)
      return text ? (JSON.parse(text) as unknown) : null
    } catch {
      report('A kept transcript could not be read; the thread is read from the server instead.')
      return null
    }
  }
  const flushLive = () => {
    if (liveTimer !== null) clock.clearTimeout(liveTimer)
    liveTimer = null
    const flushed = [...pendingLive]
    pendingLive.clear()
    for (const [key, turn] of flushed) write(key, turn && (() => JSON.stringify(turn)))
  }
  /** Scopes attached now, over every query client: the page is heard while there is one. */
  let attachments = 0
  let stopHearingLive = () => {}

  return {
    attach(queryClient, scope, timers, warn) {
      report = warn
      clock = timers
      let scopes = attached.get(queryClient)
      if (!scopes) attached.set(queryClient, (scopes = new Set()))
      if (scopes.has(scope) || !storage) return () => {}
      scopes.add(scope)
      // The live text is written when the page is left, heard from the first scope attached.
      if (attachments++ === 0) stopHearingLive = onPageHide(flushLive)
      restore(queryClient, scope, read(transcriptsKey(scope)), restored)
      let timer: unknown = null
      let detached = false
      const save = () => {
        timer = null
        if (!detached)
          write(transcriptsKey(scope), () => serialize(queryClient, scope, maxChars, forgotten))
      }
      const schedule = () => {
        if (timer === null) timer = timers.setTimeout(save, options.throttleMs ?? 1_000)
      }
      /** The data each query held when it last asked for a write (or was restored). */
      const seen = new WeakMap<object, unknown>()
      const stopCache = queryClient.getQueryCache().subscribe((event) => {
        if (!ofScope(event.query.queryKey, scope)) return
        if (event.type === 'updated') {
          const { query, action } = event
          const data = query.state.data
          // A read that answers again brings a forgotten thread back.
          const back = action.type === 'success' && !action.manual && forgotten.delete(query)
          const last = seen.has(query) ? seen.get(query) : restored.has(data as object) && data
          seen.set(query, data)
          // Nothing to write for what storage holds already: a read that started, or answered the
          // record as it was (a 304, an equal body: the same data object). Written anyway, it
          // cost a serialization of the whole scope a second later or, on a reload within that
          // second, in the old page's `pagehide` (~700 KB at 2,000 messages) before the next page
          // could start. A failed read is written: its thread may be forgotten right after it.
          if (!back && action.type !== 'error' && last === data) return
        }
        if (event.type === 'removed' || event.type === 'updated') schedule()
      })
      const unhide = onPageHide(() => timer !== null && save())
      return () => {
        if (detached) return
        detached = true
        stopCache()
        if (timer !== null) timers.clearTimeout(timer)
        timer = null
        unhide()
        scopes.delete(scope)
        // The last scope gone: what waits for the page being left is written now, and nothing
        // of this persistence listens any more (an app may make one per client it disposes).
        if (--attachments === 0) {
          flushLive()
          stopHearingLive()
        }
      }
    },
    keptLive(scope, threadId) {
      const turn = parseLiveTurn(read(liveKey(scope, threadId)))
      return turn && !turn.ended ? turn : null
    },
    isKept: (data) => typeof data === 'object' && data !== null && restored.has(data),
    forget(queryClient, queryKey) {
      const query = queryClient.getQueryCache().find({ queryKey, exact: true })
      if (!query) return
      forgotten.add(query)
      // Written by the cache event of the read's failure, which comes right after.
    },
    keepLive(scope, threadId, turn) {
      pendingLive.set(liveKey(scope, threadId), turn)
      liveTimer ??= clock.setTimeout(flushLive, options.throttleMs ?? 250)
    },
  }
}

/** The kept transcripts, checked like a read's answer, into the cache (as old as they were). */
function restore(
  queryClient: QueryClient,
  scope: string,
  kept: unknown,
  restored: WeakSet<object>,
) {
  if (typeof kept !== 'object' || kept === null || (kept as Kept).v !== VERSION) return
  const threads = (kept as Kept).threads
  if (!Array.isArray(threads)) return
  for (const thread of threads as unknown[]) {
    const { queryKey, data, updatedAt } = (thread ?? {}) as Partial<Kept['threads'][number]>
    // Another scope's key in this scope's storage (an older version's keys, or tampering) is junk.
    if (!Array.isArray(queryKey) || !ofScope(queryKey, scope) || !Number.isFinite(updatedAt))
      continue
    if (queryClient.getQueryData(queryKey) !== undefined) continue
    const parsed = parseHistorySnapshot(data)
    // Never newer than now: kept while this machine's clock ran ahead, it would outrank reads.
    if (!parsed.success) continue
    queryClient.setQueryData(queryKey, parsed.value, {
      // The clock belongs in the context (`now`); this file is under rewrite (issue 27).
      // eslint-disable-next-line no-restricted-properties
      updatedAt: Math.min(updatedAt as number, Date.now()),
    })
    restored.add(queryClient.getQueryData(queryKey) ?? parsed.value)
  }
}

/** This scope's transcripts, the read most recently first, as many as fit in `maxChars`. */
function serialize(
  queryClient: QueryClient,
  scope: string,
  maxChars: number,
  forgotten: WeakSet<object>,
): string | null {
  const queries = queryClient
    .getQueryCache()
    .findAll({ queryKey: ['preview-chat', scope] })
    // A thread a read said is gone (not found, or not this user's) is not kept.
    .filter((query) => query.state.data !== undefined && !forgotten.has(query))
    .sort((a, b) => b.state.dataUpdatedAt - a.state.dataUpdatedAt)
  const threads: Kept['threads'] = []
  let chars = 0
  for (const query of queries) {
    const entry = {
      queryKey: [...query.queryKey],
      data: query.state.data,
      updatedAt: query.state.dataUpdatedAt,
    }
    const size = JSON.stringify(entry).length
    if (chars + size > maxChars) continue
    chars += size
    threads.push(entry)
  }
  return threads.length === 0 ? null : JSON.stringify({ v: VERSION, threads } satisfies Kept)
}
