/**
 * Where the queue is kept: one value per thread, changed only by read-modify-write inside a
 * transaction, so that two tabs changing one queue at once never lose either change. IndexedDB in
 * a browser: its read-write transactions on one store run one after the other across every tab of
 * the origin. (localStorage cannot do this, even under a Web Lock: each tab process reads its own
 * copy, updated a moment after another tab's write — a test of two Chromium tabs incrementing one
 * key under a lock ended at 334 of 400.) In memory where there is no IndexedDB (Node, React
 * Native, a test DOM): one document, whose clients share it.
 */

/** A store of queues ([decision](../../../../docs/decisions/client-queue.md)). */
export interface QueueStore {
  /** What `key` holds now (the stored string), or `null`. */
  read(key: string): Promise<string | null>
  /**
   * Calls `change` with what `key` holds, in a transaction that writes what it returns (`null`:
   * removes the key; `undefined`: writes nothing). Another tab's change of the key runs before or
   * after it, never between its read and its write. `change` runs in a later task than the call.
   */
  update(key: string, change: (stored: string | null) => string | null | undefined): Promise<void>
  /** Calls `listener` whenever a change of `key` was written, here or in another tab. */
  watch(key: string, listener: () => void): () => void
}

/** The queues of this document, in memory (`memoryQueueStore()`): its clients share them. */
export function memoryQueueStore(): QueueStore {
  const values = new Map<string, string>()
  const watchers = new Map<string, Set<() => void>>()
  let chain = Promise.resolve()
  return {
    read: (key) => Promise.resolve(values.get(key) ?? null),
    update(key, change) {
      // One change at a time, each in a later task than its call (as a transaction's callback is).
      const run = chain.then(() => {
        const next = change(values.get(key) ?? null)
        if (next === undefined) return
        if (next === null) values.delete(key)
        else values.set(key, next)
        for (const listener of [...(watchers.get(key) ?? [])]) listener()
      })
      chain = run.catch(() => {})
      return run
    },
    watch(key, listener) {
      let set = watchers.get(key)
      if (!set) watchers.set(key, (set = new Set()))
      set.add(listener)
      return () => void set.delete(listener)
    },
  }
}

const DB = 'preview-chat'
const STORE = 'queues'
const CHANNEL = 'preview-chat:queues'

/**
 * The queues in IndexedDB (database `preview-chat`, store `queues`), every tab of the origin
 * told of a change over a BroadcastChannel. The default where the browser has IndexedDB.
 */
export function indexedDbQueueStore(factory: IDBFactory = indexedDB): QueueStore {
  let opened: Promise<IDBDatabase> | null = null
  // A refused open is not kept: the next call tries again (a profile unlocked, a quota freed).
  const db = () =>
    (opened ??= new Promise<IDBDatabase>((resolve, reject) => {
      const request = factory.open(DB, 1)
      request.onupgradeneeded = () => request.result.createObjectStore(STORE)
      request.onsuccess = () => resolve(request.result)
      request.onerror = () => reject(request.error ?? new Error('IndexedDB refused to open'))
      request.onblocked = () => reject(new Error('IndexedDB is blocked by another tab'))
    }).catch((cause: unknown) => {
      opened = null
      throw cause
    }))
  const done = (transaction: IDBTransaction) =>
    new Promise<void>((resolve, reject) => {
      transaction.oncomplete = () => resolve()
      transaction.onabort = transaction.onerror = () =>
        reject(transaction.error ?? new Error('The transaction was aborted'))
    })
  const announce = typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : null
  const watchers = new Map<string, Set<() => void>>()
  const told = (key: string) => {
    for (const listener of [...(watchers.get(key) ?? [])]) listener()
  }
  let hearing: BroadcastChannel | null = null
  return {
    async read(key) {
      const transaction = (await db()).transaction(STORE, 'readonly')
      const request = transaction.objectStore(STORE).get(key)
      await done(transaction)
      return typeof request.result === 'string' ? request.result : null
    },
    async update(key, change) {
      const transaction = (await db()).transaction(STORE, 'readwrite')
      const store = transaction.objectStore(STORE)
      const request = store.get(key)
      let wrote = false
      request.onsuccess = () => {
        const next = change(typeof request.result === 'string' ? request.result : null)
        if (next === undefined) return
        wrote = true
        if (next === null) store.delete(key)
        else store.put(next, key)
      }
      await done(transaction)
      if (!wrote) return
      // Every watcher, of this document too, hears it through the channel (another object).
      if (announce) announce.postMessage(key)
      else told(key)
    },
    watch(key, listener) {
      let set = watchers.get(key)
      if (!set) watchers.set(key, (set = new Set()))
      set.add(listener)
      if (!hearing && typeof BroadcastChannel === 'function') {
        hearing = new BroadcastChannel(CHANNEL)
        hearing.onmessage = (event: MessageEvent) => {
          if (typeof event.data === 'string') told(event.data)
        }
      }
      return () => void set.delete(listener)
    },
  }
}
