/**
 * The client's queue (`queue()` of `@preview-chat/core/queue`) as a tab keeps it, for consumers'
 * tests: `seedQueue` writes what a tab would have written (a page that queued messages, then
 * reloaded), `readQueue` reads what the client wrote. The queue lives in the browser's storage,
 * not in the backend, so these take the storage the client uses (`queue({ storage })`), or
 * `localStorage`. What `seedQueue` writes is read back with core's own parser
 * (`parseStoredQueue`), so a shape core would not read fails here, not in the client.
 */
import type { PreviewChatErrorCode } from '@preview-chat/core'
import {
  parseStoredQueue,
  queueStorageKey,
  serializeQueue,
  type QueueStorage,
} from '@preview-chat/core/queue'

/** Which thread's queue, of which scope. */
export interface QueueKeyOptions {
  /** The client's `scope` (the user it was made for); `''`, core's default, when it has none. */
  scope?: string
  /** `demo-project` by default (the seeders' default). */
  projectId?: string
  /** `demo-agent` by default. */
  agentId?: string
  threadId: string
  /** The client's `queue({ storage })`; `localStorage` by default. */
  storage?: QueueStorage
}

/** A message as the queue holds it. */
export interface StoredQueuedMessage {
  /** Its client id, the `messageId` it is sent with. */
  id: string
  text: string
  /**
   * `queued`; `sending`: a tab posted it and went away before it knew its fate (the next sender
   * judges it by the record); `undelivered`: it could not be sent, or may have been (`error`).
   */
  status: 'queued' | 'sending' | 'undelivered'
  error?: { code: PreviewChatErrorCode; message: string }
}

export interface SeedQueueOptions extends QueueKeyOptions {
  /** In order; a string is a `queued` message with a fresh id. */
  messages: readonly (string | (Omit<StoredQueuedMessage, 'id'> & { id?: string }))[]
  /** Paused, as after a Stop (`whenStopped: 'pause'`): nothing is sent until `resumeQueue()`. */
  paused?: boolean
  /** What the tabs learnt of the server: it dedupes a `messageId` (`null`: not known yet). */
  dedupes?: boolean | null
}

/** A thread's queue as storage holds it. */
export interface StoredQueue {
  /** The storage key: `preview-chat:queue:<scope>:<JSON [projectId, agentId, threadId]>`. */
  key: string
  messages: StoredQueuedMessage[]
  paused: boolean
  dedupes: boolean | null
}

function where(options: QueueKeyOptions): { key: string; storage: QueueStorage } {
  const { scope = '', projectId = 'demo-project', agentId = 'demo-agent', threadId } = options
  const storage =
    options.storage ?? (globalThis as { localStorage?: QueueStorage }).localStorage ?? null
  if (!storage)
    throw new Error(
      'seedQueue/readQueue: this environment has no localStorage; pass the `storage` the client is given (`queue({ storage })`).',
    )
  return { key: queueStorageKey({ scope, projectId, agentId, threadId }), storage }
}

/**
 * A `Storage` in memory (`getItem`, `setItem`, `removeItem`, and its `map`), for
 * `queue({ storage })` and these helpers where there is no `localStorage` (Node), or to keep each
 * test's queues apart.
 */
export function memoryStorage(): QueueStorage & { readonly map: Map<string, string> } {
  const map = new Map<string, string>()
  return {
    map,
    getItem: (key) => map.get(key) ?? null,
    setItem: (key, value) => void map.set(key, value),
    removeItem: (key) => void map.delete(key),
  }
}

/** Reads what `raw` holds with core's parser; what core would not read throws. */
function parsed(key: string, raw: string | null): StoredQueue {
  const queue = parseStoredQueue(raw)
  if ('problem' in queue) throw new Error(`The queue stored at ${key} ${queue.problem}.`)
  return {
    key,
    messages: queue.items.map(({ id, text, status, error }) => ({
      id,
      text,
      status,
      ...(error && { error: { code: error.code, message: error.message } }),
    })),
    paused: queue.paused,
    dedupes: queue.dedupes,
  }
}

/**
 * Writes a thread's queue as a tab would have left it, and returns it with the ids it gave. Seed
 * before the client under test opens the thread: a client reads the queue when its session starts
 * (a browser's other tabs hear a write through `storage` events; a write made here, outside
 * a client, reaches no client that is open already).
 */
export function seedQueue(options: SeedQueueOptions): StoredQueue {
  const { key, storage } = where(options)
  const items = options.messages.map((message) =>
    typeof message === 'string'
      ? { id: crypto.randomUUID(), text: message, status: 'queued' as const }
      : { ...message, id: message.id ?? crypto.randomUUID() },
  )
  const raw = serializeQueue({
    items,
    paused: options.paused ?? false,
    dedupes: options.dedupes ?? null,
  })
  const seeded = parsed(key, raw)
  storage.setItem(key, raw)
  return seeded
}

/** The thread's queue as the client keeps it (no messages when storage holds none). */
export function readQueue(options: QueueKeyOptions): StoredQueue {
  const { key, storage } = where(options)
  return parsed(key, storage.getItem(key))
}
