/**
 * The client's queue (`queue()` of `@preview-chat/core/queue`) as a tab keeps it, for consumers'
 * tests: `seedQueue` writes what a tab would have written (a page that queued messages, then
 * reloaded), `readQueue` reads what the client wrote. The queue lives in the browser's store (a
 * `QueueStore`: IndexedDB in a browser), not in the backend, so these take the store the client is
 * given (`queue({ store })`, e.g. `memoryQueueStore()`). What `seedQueue` writes is read back with
 * core's own parser (`parseStoredQueue`), so a shape core would not read fails here, not in the
 * client.
 */
import type { PreviewChatErrorCode } from '@preview-chat/core'
import {
  parseStoredQueue,
  queueStorageKey,
  serializeQueue,
  type QueueStore,
} from '@preview-chat/core/queue'

export { memoryQueueStore } from '@preview-chat/core/queue'

/** Which thread's queue, of which scope. */
export interface QueueKeyOptions {
  /** The client's `scope` (the user it was made for); `''`, core's default, when it has none. */
  scope?: string
  /** `demo-project` by default (the seeders' default). */
  projectId?: string
  /** `demo-agent` by default. */
  agentId?: string
  threadId: string
  /** The client's `queue({ store })` (e.g. `memoryQueueStore()`). */
  store: QueueStore
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
  /** The server took it into its own queue as this item (a server that queues messages). */
  queueId?: string
}

export interface SeedQueueOptions extends QueueKeyOptions {
  /** In order; a string is a `queued` message with a fresh id. */
  messages: readonly (string | (Omit<StoredQueuedMessage, 'id'> & { id?: string }))[]
  /** Paused, as after a Stop (`whenStopped: 'pause'`): its messages wait for `resumeQueue()`. */
  paused?: boolean
  /** What the tabs learnt of the server: it dedupes a `messageId` (`null`: not known yet). */
  dedupes?: boolean | null
  /** What the tabs learnt of the server: it queues messages itself (`null`: not known yet). */
  serverQueue?: boolean | null
}

/** A thread's queue as storage holds it. */
export interface StoredQueue {
  /** The storage key: `preview-chat:queue:<scope>:<JSON [projectId, agentId, threadId]>`. */
  key: string
  messages: StoredQueuedMessage[]
  paused: boolean
  dedupes: boolean | null
  serverQueue: boolean | null
}

function keyOf(options: QueueKeyOptions): string {
  const { scope = '', projectId = 'demo-project', agentId = 'demo-agent', threadId } = options
  return queueStorageKey({ scope, projectId, agentId, threadId })
}

/** Reads what `raw` holds with core's parser; what core would not read throws. */
function parsed(key: string, raw: string | null): StoredQueue {
  const queue = parseStoredQueue(raw)
  if ('problem' in queue) throw new Error(`The queue stored at ${key} ${queue.problem}.`)
  return {
    key,
    messages: queue.items.map(({ id, text, status, error, queueId }) => ({
      id,
      text,
      status,
      ...(error && { error: { code: error.code, message: error.message } }),
      ...(queueId !== undefined && { queueId }),
    })),
    paused: queue.items.some((item) => item.held === true),
    dedupes: queue.dedupes,
    serverQueue: queue.serverQueue,
  }
}

/**
 * Writes a thread's queue as a tab would have left it, and resolves with it (with the ids it
 * gave). Seed before the client under test opens the thread: a client reads the queue when its
 * session starts, and hears a later write of the store as another tab's.
 */
export async function seedQueue(options: SeedQueueOptions): Promise<StoredQueue> {
  const key = keyOf(options)
  const items = options.messages.map((message) =>
    typeof message === 'string'
      ? { id: crypto.randomUUID(), text: message, status: 'queued' as const }
      : { ...message, id: message.id ?? crypto.randomUUID() },
  )
  // Paused as after a Stop: every waiting message is held (`resumeQueue()` sends them).
  const held = (item: (typeof items)[number]) =>
    options.paused === true && item.status === 'queued' && item.queueId === undefined
  const raw = serializeQueue({
    items: items.map((item) => (held(item) ? { ...item, held: true as const } : item)),
    dedupes: options.dedupes ?? null,
    serverQueue: options.serverQueue ?? null,
    serverRev: 0,
  })
  const seeded = parsed(key, raw)
  await options.store.update(key, () => raw)
  return seeded
}

/** The thread's queue as the client keeps it (no messages when the store holds none). */
export async function readQueue(options: QueueKeyOptions): Promise<StoredQueue> {
  const key = keyOf(options)
  return parsed(key, await options.store.read(key))
}
