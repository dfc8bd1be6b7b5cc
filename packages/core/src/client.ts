import { QueryClient } from '@tanstack/query-core'
import {
  browserResumeSignal,
  randomUuid,
  defaultDraftStorage,
  defaultTimers,
  safeDraftStorage,
  type DraftStorage,
  type ResumeSignal,
  type Timers,
} from './platform/environment'
import { PreviewChatError } from './wire/contract/errors'
import { pathSegmentIdProblem } from './wire/contract/ids'
import { lingering } from './effects/linger'
import {
  pushIgnored,
  type PushAdapter,
  type PushContext,
  type PushListener,
  type PushSource,
} from './wire/pushSource'
import type { TranscriptPersistence } from './effects/persistence'
import { PreviewChatSession } from './effects/session'
import {
  relaySessionPart,
  type RelayAdapter,
  type RelayWithPart,
  type TabRelay,
} from './effects/tabRelay'
import type { ReadonlyStore, SessionExtension } from './effects/context'
import type { SessionState } from './engine/select'
import type { EnginePart } from './engine/model'
import type { CompleteSnapshot } from './wire/contract/snapshot'
import type { ThrottleOptions } from './platform/throttle'
import type { ReleasedPlatform } from './released'
import { createTransport, type HeadersOption, type ThreadKey } from './wire/transport'
import { DEFAULT_DELEGATION_CHAR_LIMIT } from './engine/fold'
import { explain } from './wire/contract/explain'

/**
 * How a client's sessions reach a UI: `throttleState` (what `createPreviewChatClient` uses), or a
 * view of your own. The React binding reads every session through the client's throttle.
 */
export type Throttle = (
  source: ReadonlyStore<SessionState>,
  options: ThrottleOptions,
) => ReadonlyStore<SessionState>

export interface PreviewChatClientOptions {
  /** REST base of the agents v2 API. Default `/rest`. */
  baseUrl?: string
  fetch?: typeof globalThis.fetch
  /**
   * Headers for every request (e.g. `Authorization`, or n8n's `browser-id`); a function is called
   * per request. They reach the push channel too: with `headers`, `createPreviewChatClient`'s
   * default push is `ssePush()`, since a browser WebSocket cannot carry headers.
   */
  headers?: HeadersOption
  /**
   * `fetch`'s `credentials` for every request and the SSE push, e.g. `'include'` for cookie auth
   * (n8n's `n8n-auth` cookie) against a server on another origin. Default: the platform's.
   */
  credentials?: RequestCredentials
  /**
   * The push channel's URL. Default `{baseUrl}/push`. n8n needs a `pushRef` of the tab's own:
   * `` `/rest/push?pushRef=${crypto.randomUUID()}` ``.
   */
  pushUrl?: string
  /**
   * What the server can do, when the app knows better than the first turn shows: whether a turn
   * survives its POST closing, and whether Stop by execution id exists. Both are `true` on the
   * spec's servers and `false` on the released n8n 2.41; by default the client learns them.
   */
  server?: { keepsTurnOnDisconnect?: boolean; stopsByExecutionId?: boolean }
  /**
   * Speak to the released n8n 2.41 too: `releasedPlatform()` (a turn begun without
   * `execution-started` shown live under a stand-in id, the statuses and active execution its
   * snapshots leave out derived, Stop by closing the stream where there is no Stop route), or
   * `false`. `createPreviewChatClient`'s default: `releasedPlatform()`;
   * `createMinimalPreviewChatClient`'s: none, for the spec's servers only (a released server's
   * reads then fail, and its unannounced turn's stream is read to its end unshown, with an error
   * and a warning that name this option).
   */
  released?: ReleasedPlatform | false
  /**
   * The push channel: `websocketPush()` or `ssePush()` (opened on `pushUrl` with this client's
   * fetch, headers and timers), a `PushSource` of your own, or `false` for none (the session then
   * polls while a turn runs). `createPreviewChatClient`'s default: `ssePush()` when `headers` are
   * given (a browser WebSocket cannot send them), else `websocketPush()` where `WebSocket`
   * exists, else none. `createMinimalPreviewChatClient`'s default: none.
   */
  push?: PushSource | PushAdapter | false
  /** Child text and reasoning budget per delegation. Default 4,000, as the server records. */
  delegationCharLimit?: number
  /** The TanStack Query client that caches recorded history. Default: one of its own. */
  queryClient?: QueryClient
  /** Where drafts survive reloads; `null` to keep them in memory only. Default sessionStorage. */
  storage?: DraftStorage | null
  /** Scopes stored drafts and the tab relay, e.g. by the user id. */
  scope?: string
  /**
   * How tabs of this origin share live turns, so that a second tab follows token by token and
   * holds its gate while this one posts: `broadcastChannelRelay()`, a `TabRelay` of your own, or
   * `false`. `createPreviewChatClient`'s default: `broadcastChannelRelay()`;
   * `createMinimalPreviewChatClient`'s: none (other tabs follow by history reads), and a relay of
   * your own is given to it as `tabRelay(yourRelay)`, which brings the engine's part that reads
   * the other tabs (a client without a relay carries none of it).
   */
  relay?: TabRelay | RelayAdapter | false
  /**
   * How sessions reach a UI (the React binding reads through it): `throttleState`, which passes
   * streamed deltas on once per frame and everything else at once, a view of your own, or `false`
   * for every change as it happens. `createPreviewChatClient`'s default: `throttleState`;
   * `createMinimalPreviewChatClient`'s: `false`.
   */
  throttle?: Throttle | false
  /** This tab's id on the relay (unique per client). Default: a random UUID. */
  tabId?: string
  /**
   * Keep recorded transcripts, and a running answer's live text, across a reload:
   * `persistTranscripts()` from `@preview-chat/core/persist` (opt-in; the tab's sessionStorage by
   * default). Off by default: the transcript then shows after the first read.
   */
  persist?: TranscriptPersistence
  /**
   * A message queue: `queue()` from `@preview-chat/core/queue` (opt-in). A message sent while the
   * thread is busy waits in it (`state.queue`), kept across reloads and shared by this scope's
   * tabs, and is sent once, in order, when the thread is free. Off by default: Send waits.
   */
  queue?: SessionExtension
  /** Timeout of a history read or a Stop. Default 15 s. */
  requestTimeoutMs?: number
  /**
   * The shortest time between two history reads. Snapshots are recorded in batches, so reading
   * faster than they are written costs requests and shows nothing new. Default 250 ms.
   */
  minReadIntervalMs?: number
  /** How long a Stop asked before `execution-started` waits for it. Default 10 s. */
  stopWaitMs?: number
  /**
   * How long a posted message waits for the server to accept it (`execution-started`, or the
   * first event of its stream) before the tab stops waiting, keeps the draft and reads the record
   * to learn whether the turn runs. The stream stays open. Default 30 s.
   */
  submitTimeoutMs?: number
  /**
   * How long this tab's own turn stream may stay silent before the reads it defers run anyway
   * (push notifications keep coming while a proxy holds the stream). Default 5 s.
   */
  streamSilenceMs?: number
  /**
   * Called once per kind of protocol oddity (an unknown event type, a malformed event, a browser
   * that refuses storage). Default: `console.warn`.
   */
  onWarning?: (message: string) => void
  /** Backoff of read retries after failures. Default 500 ms doubling to 15 s, with jitter. */
  retry?: { baseMs: number; maxMs: number }
  /** Backoff of polling while a turn runs and no push channel is connected. Default 1 s to 10 s. */
  poll?: { baseMs: number; maxMs: number }
  /**
   * How long a session with no subscriber, and the push channel with no session, stay open
   * before they close (so that a React StrictMode remount reuses them). Default 1 s.
   */
  lingerMs?: number
  /** For tests: timers, the clock, randomness (backoff jitter), the page's visibility/online signal. */
  timers?: Timers
  now?: () => number
  random?: () => number
  resumeSignal?: ResumeSignal
}

/**
 * `createMinimalPreviewChatClient`'s options: those of `createPreviewChatClient`, but for the
 * relay, which is one that brings the engine's part reading the other tabs
 * (`broadcastChannelRelay()`, or `tabRelay(yourRelay)`), or none.
 */
export interface MinimalPreviewChatClientOptions extends Omit<PreviewChatClientOptions, 'relay'> {
  /** `broadcastChannelRelay()`, `tabRelay(yourRelay)`, or none (the default: other tabs follow by reads). */
  relay?: RelayWithPart | false
}

export interface SessionOptions extends ThreadKey {
  /** The app minted this thread id and knows it has no history: skip the first read. */
  isNew?: boolean
  /** Use this TanStack Query client instead of the client's (the React provider passes the app's). */
  queryClient?: QueryClient
}

export interface PreviewChatClient {
  /**
   * The session of one thread. The same key (and query client) gives the same session while it
   * is in use, so several components can follow one thread with one set of requests.
   */
  session(options: SessionOptions): PreviewChatSession
  /**
   * Starts a thread's first history read now — before React renders, as a route loader would
   * (TanStack's `prefetchQuery`) — so that it is on its way while the page's code runs; the
   * session takes it as its first read. Pass the `queryClient` the app's provider will use.
   * Resolves once that read has ended (answered, failed or cancelled) or the session is disposed,
   * at once when there is nothing to read; never rejects (a failed read is the session's
   * `readError`). An app may await it, with a cap, before its first render. Throws as `session()`
   * does for an id it refuses.
   */
  prefetch(options: SessionOptions): Promise<void>
  /** The TanStack Query key under which a thread's recorded history is cached (in this client's scope). */
  queryKey(key: ThreadKey): readonly unknown[]
  readonly queryClient: QueryClient
  /** The timers every session of this client runs on (the React binding's throttle too). */
  readonly timers: Timers
  /**
   * A session's state as a UI should read it: through the client's `throttle` (streamed deltas
   * at most once per frame, or per `throttleMs`; `0` for every one), or, for a client without a
   * throttle, the session's own store whatever `throttleMs` says.
   */
  view(session: PreviewChatSession, throttleMs?: number | 'frame'): ReadonlyStore<SessionState>
  readonly options: Readonly<PreviewChatClientOptions>
  /**
   * Ends this client for good, e.g. when its user signs out: every session it handed out is
   * disposed (`session.dispose()`: nothing is cancelled on the server), and `persist` stops
   * writing for it. A session asked for afterwards is a fresh one.
   */
  dispose(): void
}

/**
 * The documented cache key of a thread's recorded history:
 * `['preview-chat', scope, projectId, agentId, threadId, 'messages']`. The scope (the client's
 * `scope`, e.g. the user id; `''` when none) is part of it, so that two users' clients sharing one
 * `QueryClient` never read each other's transcripts; `['preview-chat', scope]` is the prefix of
 * everything one user's client caches (`queryClient.removeQueries({ queryKey: ['preview-chat',
 * 'alice'] })` on sign-out).
 */
export const historyQueryKey = (key: ThreadKey, scope = '') =>
  ['preview-chat', scope, key.projectId, key.agentId, key.threadId, 'messages'] as const

/**
 * A client with only what `options` passes: no push channel (sessions poll while a turn runs), no
 * tab relay and no throttle unless given, so that a bundle holds only the adapters an app imports:
 * `createMinimalPreviewChatClient({ push: ssePush() })`. `createPreviewChatClient` is this with
 * the defaults filled in.
 */
export function createMinimalPreviewChatClient(
  options: MinimalPreviewChatClientOptions = {},
): PreviewChatClient {
  const baseUrl = options.baseUrl ?? '/rest'
  const fetchImpl =
    options.fetch ?? ((...args: Parameters<typeof fetch>) => globalThis.fetch(...args))
  const timers = options.timers ?? defaultTimers
  const queryClient = options.queryClient ?? new QueryClient()
  // What `releasedPlatform()` made (its engine part and snapshot completion), or nothing; anything
  // else is refused at once, as a bare relay is (a caller in JavaScript, or one past the types).
  const released = (options.released || null) as {
    enginePart: EnginePart
    completeSnapshot: CompleteSnapshot
  } | null
  if (
    released &&
    (typeof released.completeSnapshot !== 'function' ||
      typeof released.enginePart?.wrap !== 'function')
  )
    throw new PreviewChatError(
      'invalid_request',
      `Pass released: releasedPlatform(), or false.${explain('bad-option')}`,
    )
  const transport = createTransport({
    baseUrl,
    fetch: fetchImpl,
    ...(options.headers && { headers: options.headers }),
    ...(options.credentials && { credentials: options.credentials }),
    requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
    timers,
    ...(released && { completeSnapshot: released.completeSnapshot }),
  })
  const lingerMs = options.lingerMs ?? 1_000
  const warn = warnOnce(options.onWarning)
  const push = createPushHub(
    resolvePush(options.push, {
      url: options.pushUrl ?? `${baseUrl.replace(/\/+$/, '')}/push`,
      fetch: fetchImpl,
      timers,
      ...(options.headers && { headers: options.headers }),
      ...(options.credentials && { credentials: options.credentials }),
    }),
    timers,
    lingerMs,
    warn,
  )
  const sessions = new WeakMap<QueryClient, Map<string, PreviewChatSession>>()
  /** Every map of `sessions`, for `dispose()` (a WeakMap cannot be walked). */
  const sessionMaps = new Set<Map<string, PreviewChatSession>>()
  // Sessions a prefetch started: kept for the render that takes the read over, even on a server.
  const prefetched = new WeakSet<PreviewChatSession>()
  const storage = safeDraftStorage(
    options.storage === undefined ? defaultDraftStorage() : options.storage,
    warn,
  )
  const config = {
    delegationCharLimit: options.delegationCharLimit ?? DEFAULT_DELEGATION_CHAR_LIMIT,
    retry: options.retry ?? { baseMs: 500, maxMs: 15_000 },
    poll: options.poll ?? { baseMs: 1_000, maxMs: 10_000 },
    stopWaitMs: options.stopWaitMs ?? 10_000,
    submitTimeoutMs: options.submitTimeoutMs ?? 30_000,
    streamSilenceMs: options.streamSilenceMs ?? 5_000,
    minReadIntervalMs: options.minReadIntervalMs ?? 250,
    keepLive: options.persist !== undefined,
  }
  // This tab's id on the relay: holds and turns are told apart by the tab that sent them.
  const tab = options.tabId ?? randomUuid()
  const relayAdapter = options.relay || null
  // A bare relay is refused here too: a caller in JavaScript, or one past the types.
  const relayHost = relayAdapter && relaySessionPart(relayAdapter)
  if (relayAdapter && !relayHost)
    throw new PreviewChatError(
      'invalid_request',
      `Pass relay: tabRelay(yourRelay).${explain('bad-option')}`,
    )
  const relay = relayHost
    ? (relayAdapter as RelayAdapter)({ scope: options.scope ?? '', timers, lingerMs })
    : null
  // The client's parts, in the order they wrap the engine: the released platform's next to the
  // engine (it does some of the engine's steps its own way), then the relay's, then the queue's.
  const extensions: SessionExtension[] = []
  if (released) extensions.push({ enginePart: released.enginePart })
  if (relayHost && relay) extensions.push(relayHost(relay))
  if (options.queue) extensions.push(options.queue)
  const { throttle } = options
  const scope = options.scope ?? ''
  /** What `persist` was attached to, by query client: detached when the client is disposed. */
  const attached = new Map<QueryClient, () => void>()

  const client: PreviewChatClient = {
    queryClient,
    options,
    timers,
    queryKey: (key) => historyQueryKey(key, scope),
    view: (session, throttleMs = 'frame') =>
      throttle ? throttle(session.store, { throttleMs, timers }) : session.store,
    dispose() {
      for (const byKey of sessionMaps) for (const session of [...byKey.values()]) session.dispose()
      for (const detach of attached.values()) detach()
      attached.clear()
    },
    prefetch(sessionOptions) {
      const session = client.session(sessionOptions)
      prefetched.add(session)
      return session.prefetch()
    },
    session(sessionOptions) {
      const { isNew, queryClient: sessionQueryClient, ...key } = sessionOptions
      for (const name of ['projectId', 'agentId', 'threadId'] as const) {
        const problem = pathSegmentIdProblem(key[name])
        if (problem)
          throw new PreviewChatError(
            'invalid_request',
            `A session's ${name} ${problem}.${explain('bad-id')}`,
          )
      }
      const cacheClient = sessionQueryClient ?? queryClient
      let byKey = sessions.get(cacheClient)
      if (!byKey) {
        sessions.set(cacheClient, (byKey = new Map()))
        sessionMaps.add(byKey)
      }
      const id = JSON.stringify([key.projectId, key.agentId, key.threadId])
      const existing = byKey.get(id)
      if (existing) return existing
      const { persist } = options
      // Before the session reads the cache: what a reload kept is there for its first render.
      if (persist && !attached.has(cacheClient))
        attached.set(cacheClient, persist.attach(cacheClient, scope, timers, warn))
      const session = new PreviewChatSession(
        { ...key, ...(isNew !== undefined && { isNew }) },
        {
          transport,
          queryClient: cacheClient,
          queryKey: historyQueryKey(key, scope),
          listenToPush: push.listen,
          pushConnected: push.connected,
          timers,
          now: options.now ?? Date.now,
          random: options.random ?? Math.random,
          newId: randomUuid,
          resumeSignal: options.resumeSignal ?? browserResumeSignal,
          extensions,
          tab,
          storage,
          draftKey: `preview-chat:draft:${scope}:${id}`,
          ...(isNew === true && { knownKey: `preview-chat:known:${scope}:${id}` }),
          config,
          lingerMs,
          warn,
          ...(options.server && { server: options.server }),
          ...(persist && {
            keptLive: persist.keptLive(scope, id),
            keepLive: (turn) => persist.keepLive(scope, id, turn),
            ...(persist.isKept && { isKept: persist.isKept }),
            ...(persist.forget && {
              forgetKept: () => persist.forget?.(cacheClient, historyQueryKey(key, scope)),
            }),
          }),
          onIdle: () => {
            if (byKey.get(id) === session) byKey.delete(id)
          },
        },
      )
      byKey.set(id, session)
      forgetUnlistenedOnServer(session, prefetched, () => {
        if (byKey.get(id) === session) byKey.delete(id)
      })
      return session
    },
  }
  return client
}

/**
 * Where there is no `window` (a server render), a session that nobody listened to nor prefetched
 * by the end of the task that made it leaves the client's map. React runs no effects on a server,
 * so nothing ever listens there: without this, a client at module level kept every session of
 * every request, and the next request's render got the first one's (its `isNew`, its state), as
 * "Hydration failed … idle vs recovering" shows, or another user's. A session listened to in
 * that task (a Node test, a script) stays as it does in a browser.
 */
function forgetUnlistenedOnServer(
  session: PreviewChatSession,
  prefetched: WeakSet<PreviewChatSession>,
  forget: () => void,
): void {
  if (typeof window !== 'undefined') return
  queueMicrotask(() => {
    if (!session.listened && !prefetched.has(session)) forget()
  })
}

function resolvePush(
  push: PushSource | PushAdapter | false | undefined,
  context: PushContext,
): PushSource | null {
  // Said at once, not at the first listen (e.g. `push: 'sse'` of earlier versions, from JS).
  if (push && typeof push !== 'function' && typeof push.subscribe !== 'function')
    throw new PreviewChatError(
      'invalid_request',
      `push must be ssePush(), websocketPush(), a PushSource or false, not ${typeof push === 'string' ? `'${push}'` : typeof push}.${explain('bad-option')}`,
    )
  return typeof push === 'function' ? push(context) : push || null
}

/**
 * One push connection per client, however many sessions listen: opened with the first listener,
 * closed a moment after the last one leaves (so a StrictMode remount does not reconnect).
 */
function createPushHub(
  source: PushSource | null,
  timers: Timers,
  lingerMs: number,
  warn: (message: string) => void,
) {
  const listeners = new Set<PushListener>()
  let isConnected = false
  const connection = lingering(
    () => {
      const stop = source?.subscribe({
        // Handed on unchecked: each listener checks what it reads (the session a `PushMessage`,
        // an opt-in part its own type), as it checks an app's own source's values.
        onMessage: (message) => listeners.forEach((listener) => listener.onMessage(message)),
        onInvalid: (error) => warn(pushIgnored(error)),
        onRefused: (error) => warn(error.message),
        onConnectionChange: (connected) => {
          isConnected = connected
          listeners.forEach((listener) => listener.onConnectionChange?.(connected))
        },
      })
      return () => {
        stop?.()
        isConnected = false
      }
    },
    timers,
    lingerMs,
  )
  return {
    connected: () => isConnected,
    listen(listener: PushListener): () => void {
      if (!source) return () => {}
      listeners.add(listener)
      const release = connection.acquire()
      return () => {
        listeners.delete(listener)
        release()
      }
    },
  }
}

/** Reports each distinct message once (per client), to `onWarning` or the console in development. */
function warnOnce(onWarning: ((message: string) => void) | undefined): (message: string) => void {
  const seen = new Set<string>()
  const report = onWarning ?? ((message: string) => console.warn(`[preview-chat] ${message}`))
  return (message) => {
    if (seen.has(message)) return
    seen.add(message)
    try {
      report(message)
    } catch {
      // An app's onWarning that throws must not break the stream or the read that warned.
    }
  }
}
