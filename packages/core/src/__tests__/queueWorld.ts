/**
 * The world of the queue's client tests: the reference backend in process, tabs of one user (and
 * of other users, or another device) sharing one store and one set of locks as a browser's tabs
 * do, an agent whose every pause waits on a gate the test opens, and every chat POST recorded.
 */
import { expect } from 'vitest'
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import type { FlavorName } from '../../../server/src/flavor/types'
import { createPreviewChatClient, type PreviewChatClient, type SessionState } from '../index'
import { documentLocks } from '../effects/queueHost'
import {
  indexedDbQueueStore,
  memoryQueueStore,
  queue,
  queueStorageKey,
  type QueueStore,
  type WhenStopped,
} from '../queue'
import { broadcastNetwork, type BroadcastNetwork } from './world/broadcastChannel'
import { indexedDbWorld } from './world/indexedDB'
import { relayIn } from './world/relay'
import { storageOrigin, type StorageOrigin } from './world/storage'

let backend: PreviewChatBackend | null = null
/** Every client a world made (and any a test adds): `closeWorlds` disposes of them. */
export const clients: PreviewChatClient[] = []
/** For `afterEach`: the clients disposed of, the backend closed. */
export function closeWorlds() {
  for (const client of clients.splice(0)) client.dispose()
  backend?.close()
  backend = null
}

export const auth: Record<FlavorName, (user: string) => Record<string, string>> = {
  spec: (user) => ({ Authorization: `Bearer ${user}` }),
  'n8n-2.41': (user) => ({ cookie: `n8n-auth=${user}`, 'browser-id': `browser-${user}` }),
  'next-era': (user) => ({ Authorization: `Bearer ${user}` }),
}

/** Every pause of the agent waits here while the gate is shut (and rejects on a Stop). */
export function gate() {
  let open = false
  const waiting = new Set<() => void>()
  return {
    sleep: (_ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason as Error)
        if (open) return resolve()
        const go = () => {
          waiting.delete(go)
          resolve()
        }
        waiting.add(go)
        signal.addEventListener('abort', () => {
          waiting.delete(go)
          reject(signal.reason as Error)
        })
      }),
    open() {
      open = true
      for (const go of [...waiting]) go()
    },
    shut() {
      open = false
    },
  }
}

export interface WorldOptions {
  flavor?: FlavorName
  whenStopped?: WhenStopped
  /** How long a tab's unanswered POST holds the other tabs' gates (a closed tab's, here). */
  submitTimeoutMs?: number
  /**
   * How long a tab's own silent stream holds its reads (the client's default is 5 s). A POST the
   * server queued stays silent until its turn is taken up: its tab reads the record once the
   * stream has been silent this long.
   */
  streamSilenceMs?: number
  /**
   * The first device's queue store: the library's in-memory store (default), or its IndexedDB
   * store on world's IndexedDB, whose refused commits are a transaction's `QuotaExceededError`
   * abort, as a browser's at a full quota.
   */
  store?: 'memory' | 'indexedDB'
}

/** How one tab is made: without the queue (the gate), on a device of its own (no relay). */
export interface TabOptions {
  queue?: boolean
  device?: string
  /** Reads no more often than this (a tab that has not looked for a while). */
  minReadIntervalMs?: number
  /** The app says the thread is new (`isNew`); default: the user's first tab. */
  isNew?: boolean
}

/** A device's queue store, and how a test refuses its next `n` commits (`0`: none). */
interface FailingStore {
  store: QueueStore
  failWrites(n: number): void
}

/** The library's memory store, whose refused commit runs the change, then throws as a quota does. */
function inMemory(): FailingStore {
  const memory = memoryQueueStore()
  /** Transactions still to fail after their change ran (a commit refused: a full disk, say). */
  let failing = 0
  return {
    store: {
      ...memory,
      update: (key, change) => {
        if (failing === 0) return memory.update(key, change)
        failing--
        // The transaction reads and the reducer decides; its commit is refused.
        return memory.read(key).then((raw) => {
          change(raw)
          throw new DOMException('The quota has been exceeded.', 'QuotaExceededError')
        })
      },
    },
    failWrites: (n) => (failing = n),
  }
}

/** The library's IndexedDB store on world's IndexedDB: a refused commit aborts its transaction. */
function onIndexedDb(): FailingStore {
  const idb = indexedDbWorld()
  return {
    store: indexedDbQueueStore(idb.indexedDB),
    failWrites: (n) => idb.failWrites(n === 0 ? false : n),
  }
}

export function world({
  flavor = 'spec',
  whenStopped,
  submitTimeoutMs,
  streamSilenceMs,
  store: storeKind = 'memory',
}: WorldOptions = {}) {
  const agent = gate()
  backend = createPreviewChatBackend({
    dev: true,
    flavor,
    deltaMs: 0,
    snapshotMs: 5,
    sleep: agent.sleep,
  })
  const server = backend
  const { store, failWrites } = storeKind === 'indexedDB' ? onIndexedDb() : inMemory()
  /** What the store holds for `key` now (kept in step by watching it). */
  const held = new Map<string, string | null>()
  const watched = new Set<string>()
  const watchKey = (key: string) => {
    const refresh = () => void store.read(key).then((raw) => held.set(key, raw))
    store.watch(key, refresh)
    refresh()
  }
  const locks = documentLocks()
  /** Each device's own queue store and locks (another browser shares neither), and drafts. */
  const devices = new Map<string, { store: QueueStore; locks: ReturnType<typeof documentLocks> }>()
  /**
   * Each device's localStorage (world's: a quota, `storage` events), where its tabs keep drafts:
   * shared by them, and kept across a reload.
   */
  const drafts = new Map<string, StorageOrigin>()
  /** Every chat POST's `messageId` and text, in order. */
  const posts: { messageId?: string; message: string }[] = []
  /** A POST to hold before the server sees it (a tab that closes mid-send): its release. */
  let holdNextPost: ((release: () => void) => void) | null = null
  /** Awaited before each request reaches the server (a test holding a route's answers). */
  let before: (request: Request) => Promise<void> | void = () => {}
  const warnings: string[] = []
  const threadId = crypto.randomUUID()
  // Each user's tabs on a device hear each other over its BroadcastChannel (world's: a message a
  // task later, a copy, never to the sender); the first tab of a user minted the thread (`isNew`),
  // the others read it.
  const relays = new Map<string, BroadcastNetwork>()
  const deviceOf = (name: string) => {
    let device = devices.get(name)
    if (!device) devices.set(name, (device = { store: memoryQueueStore(), locks: documentLocks() }))
    return device
  }
  /** Every request of a tab's client to the backend: chat POSTs recorded (and held when asked). */
  const serverFetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(new URL(String(input), 'http://x'), init)
    if (request.method === 'POST' && request.url.endsWith('/chat')) {
      const body = JSON.parse(String(init?.body)) as { messageId?: string; message?: string }
      if (body.message !== undefined) {
        posts.push({
          ...(body.messageId && { messageId: body.messageId }),
          message: body.message,
        })
        const hold = holdNextPost
        holdNextPost = null
        if (hold) await new Promise<void>((release) => hold(release))
      }
    }
    await before(request)
    return server.fetch(request)
  }
  const tab = (user = 'alice', options: TabOptions = {}) => {
    const group = options.device === undefined ? user : `${user}@${options.device}`
    const isNew = options.isNew ?? !relays.has(user)
    if (!relays.has(user)) relays.set(user, broadcastNetwork())
    const device = options.device === undefined ? { store, locks } : deviceOf(options.device)
    if (!drafts.has(group)) drafts.set(group, storageOrigin())
    let channels = relays.get(group)
    if (!channels) relays.set(group, (channels = broadcastNetwork()))
    const client = createPreviewChatClient({
      headers: auth[flavor](user),
      scope: user,
      fetch: serverFetch,
      push: false,
      relay: relayIn(channels.tab()),
      storage: drafts.get(group)?.tab().localStorage ?? null,
      lingerMs: 0,
      minReadIntervalMs: options.minReadIntervalMs ?? 5,
      poll: { baseMs: 5, maxMs: 10 },
      retry: { baseMs: 5, maxMs: 20 },
      ...(submitTimeoutMs && { submitTimeoutMs }),
      ...(streamSilenceMs && { streamSilenceMs }),
      onWarning: (message) => warnings.push(message),
      ...(options.queue !== false && {
        queue: queue({ ...device, ...(whenStopped && { whenStopped }) }),
      }),
    })
    clients.push(client)
    const session = client.session({ projectId: 'p', agentId: 'a', threadId, isNew })
    /** The queue's states as this tab showed them, each new one once. */
    const queues: string[] = []
    const stop = session.subscribe((state) => {
      const shown = describeQueue(state)
      if (queues.at(-1) !== shown) queues.push(shown)
    })
    /** The drafts this tab showed, each new one once. */
    const draftsShown: string[] = [session.getState().draft]
    session.subscribe((state) => {
      if (draftsShown.at(-1) !== state.draft) draftsShown.push(state.draft)
    })
    return { client, session, queues, drafts: draftsShown, stop, state: () => session.getState() }
  }
  return {
    agent,
    tab,
    posts,
    warnings,
    /** What the store holds under `key` now, as last read (`watchKey` first). */
    stored: (key: string) => held.get(key) ?? null,
    watchKey,
    /** Writes `raw` under `key` as another tab would have. */
    seed: (key: string, raw: string) => store.update(key, () => raw),
    /** A client's `fetch` to the backend, as the tabs' (POSTs recorded). */
    fetch: serverFetch,
    holdNextPost: (hold: (release: () => void) => void) => (holdNextPost = hold),
    /** The localStorage of `user`'s device (its drafts): `entries()` is what it holds. */
    storageOf: (user = 'alice', device?: string) =>
      drafts.get(device === undefined ? user : `${user}@${device}`),
    /** The next `n` transactions of the store fail once their change ran (nothing written). */
    failWrites,
    /** `hook` runs before each request reaches the server (awaited). */
    before: (hook: (request: Request) => Promise<void> | void) => (before = hook),
    /** A request straight to the server under `…/chat` + `path`, as `user` (another device). */
    call: (path: string, init: RequestInit = {}, user = 'alice') =>
      server.fetch(
        new Request(new URL(`/rest/projects/p/agents/v2/a/chat${path}`, 'http://x'), {
          ...init,
          headers: { 'content-type': 'application/json', ...auth[flavor](user) },
        }),
      ),
    threadId,
    key: (user = 'alice') => {
      const key = queueStorageKey({ scope: user, projectId: 'p', agentId: 'a', threadId })
      if (!watched.has(key)) {
        watched.add(key)
        watchKey(key)
      }
      return key
    },
  }
}

/** `text:status` of each queued message, `|paused` when paused: one line per state. */
export function describeQueue(state: SessionState): string {
  const items = (state.queue ?? []).map((item) => `${item.text}:${item.status}`).join(',')
  return `[${items}]${state.queuePaused ? '|paused' : ''}`
}

export const userTexts = (state: SessionState) =>
  state.messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content.map((part) => (part.type === 'text' ? part.text : '')).join(''))

/** Waits (by polling, up to ~6 s of event-loop turns) until `done` holds, then asserts it. */
export async function until(done: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 3_000 && !(await done()); i++)
    await new Promise((resolve) => setTimeout(resolve, 2))
  expect(await done()).toBe(true)
}

export const idleWith = (tab: { state(): SessionState }, users: number) => () => {
  const state = tab.state()
  return (
    state.status === 'idle' &&
    userTexts(state).length === users &&
    state.messages.at(-1)?.executionStatus === 'success' &&
    (state.queue ?? []).length === 0
  )
}

/** How many POSTs each queued message's id got. */
export const postsById = (posts: { messageId?: string }[]) => {
  const counts = new Map<string, number>()
  for (const post of posts)
    if (post.messageId) counts.set(post.messageId, (counts.get(post.messageId) ?? 0) + 1)
  return [...counts.values()]
}
