/**
 * `@preview-chat/core/queue`: the message queue, opt-in (a client without it carries none of its
 * code). `createPreviewChatClient({ queue: queue() })`: a message sent while the thread is busy
 * waits in `state.queue` and is sent once, in order, when the thread is free, whatever the
 * browser does meanwhile: it is kept in IndexedDB under the client's `scope`, changed in its
 * transactions and shared by that scope's tabs (one of them sends, under a Web Lock), and a
 * message whose tab closed mid-send is judged by the record, never sent twice by guess. See `docs/decisions/client-queue.md`.
 */
import { queuePart } from './engine/queue/reduce'
import type { WhenStopped } from './engine/queue/model'
import type { SessionExtension } from './effects/context'
import { documentLocks, queueHost, type LockManagerLike } from './effects/queueHost'
import { indexedDbQueueStore, memoryQueueStore, type QueueStore } from './effects/queueStore'

export type { LockManagerLike, QueueKey } from './effects/queueHost'
export { indexedDbQueueStore, memoryQueueStore } from './effects/queueStore'
export type { QueueStore } from './effects/queueStore'
export { queueStorageKey } from './effects/queueHost'
export type { QueuedMessage } from './engine/select'
export type { StoredQueue, StoredQueueItem, WhenStopped } from './engine/queue/model'
/** What storage holds for a thread's queue, parsed (never trusted), and written the same way. */
export { parseStoredQueue, serializeQueue } from './engine/queue/stored'

export interface QueueOptions {
  /**
   * What a Stop pressed in this tab, or a turn that failed, does to the messages still queued:
   * `pause` (default) keeps them and sends nothing until `resumeQueue()` ("Send queued (N)");
   * `keep` sends the next one as if nothing happened; `draft` takes them out of the queue and puts
   * their text in the draft.
   */
  whenStopped?: WhenStopped
  /**
   * Where queues are kept. Default: `indexedDbQueueStore()` where the browser has IndexedDB
   * (shared by the origin's tabs, changed in transactions), else `memoryQueueStore()` (this
   * document's clients share it: Node, React Native, a test DOM).
   */
  store?: QueueStore
  /**
   * The lock that lets one tab at a time send from a queue. Default `navigator.locks`
   * (the Web Locks API), else locks within this document (where there is one document: Node,
   * React Native, a test DOM).
   */
  locks?: LockManagerLike
}

/** One set of locks per document: every client made here shares it, as tabs share Web Locks. */
let inDocument: LockManagerLike | undefined

/** One memory store per document where there is no IndexedDB: every client made here shares it. */
let inMemory: QueueStore | undefined

/** This document's memory store: where there is no IndexedDB, or the browser refuses it. */
const documentStore = () => (inMemory ??= memoryQueueStore())

/** IndexedDB where the browser has it (kept across reloads), else this document's memory. */
function defaultStore(): { store: QueueStore; kept: boolean } {
  try {
    if (typeof indexedDB === 'object' && indexedDB !== null)
      return { store: indexedDbQueueStore(), kept: true }
  } catch {
    // Reading `indexedDB` threw (a privacy mode): kept in memory, for this document.
  }
  return { store: documentStore(), kept: false }
}

/** The queue, for `PreviewChatClientOptions.queue`. */
export function queue(options: QueueOptions = {}): SessionExtension {
  const locks =
    options.locks ??
    (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks ??
    (inDocument ??= documentLocks())
  const whenStopped = options.whenStopped ?? 'pause'
  let defaultStoreOnce: { store: QueueStore; kept: boolean } | undefined
  return {
    enginePart: queuePart,
    attach: (dispatch, context) =>
      queueHost(dispatch, context, {
        whenStopped,
        ...(options.store ? { store: options.store } : (defaultStoreOnce ??= defaultStore())),
        fallback: documentStore,
        locks,
      }),
  }
}
