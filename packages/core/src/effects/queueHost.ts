/**
 * The queue's side of the host ([decision](../../../../docs/decisions/client-queue.md)): where a
 * thread's queue is kept (localStorage, shared by the scope's tabs), the two locks (the write lock
 * around each read-modify-write of it, the sender lock of the one tab that sends), and what other
 * tabs wrote (`storage` events; other clients of this document directly). It decides nothing: the
 * reducer's `queue-lock` and `queue-store` are performed, and what storage holds is handed to the
 * reducer raw, to be parsed there.
 */
import type {
  Command,
  EngineAction,
  EngineState,
  StoredQueueItem,
  WhenStopped,
} from '../engine/model'
import type { QueuedMessage, SessionState } from '../engine/select'
import { serializeQueue } from '../engine/slices/queue'
import { fromErrorRecord } from '../wire/contract/errors'
import type { ThreadKey } from '../wire/contract/ids'
import type { ExtensionPart } from './context'

/** The part of the Web Locks API the queue uses (`navigator.locks`). */
export interface LockManagerLike {
  request(
    name: string,
    options: { signal?: AbortSignal },
    callback: (lock: unknown) => unknown,
  ): Promise<unknown>
}

/** Where queues are kept: `localStorage` by default (every tab of the origin reads it). */
export interface QueueStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

export interface QueueHostOptions {
  whenStopped: WhenStopped
  storage: QueueStorage | null
  locks: LockManagerLike
}

/** Other clients of this document that follow a queue, by storage key (`storage` events skip them). */
const peers = new Map<string, Set<(raw: string | null) => void>>()

/**
 * Locks within this document, FIFO per name: where `navigator.locks` is missing (Node, React
 * Native, a test DOM), which are places with one document, so no other tab to exclude.
 */
export function documentLocks(): LockManagerLike {
  const held = new Map<string, (() => void)[]>()
  return {
    request(name, { signal }, callback) {
      return new Promise((resolve, reject) => {
        const waiting = held.get(name)
        const grant = () => {
          signal?.removeEventListener('abort', abort)
          void Promise.resolve()
            .then(() => callback(null))
            .then(resolve, reject)
            .finally(() => {
              const queue = held.get(name) ?? []
              queue.shift()
              if (queue.length === 0) held.delete(name)
              else queue[0]?.()
            })
        }
        const abort = () => {
          const queue = held.get(name) ?? []
          const at = queue.indexOf(grant)
          if (at > 0) queue.splice(at, 1)
          reject(signal?.reason)
        }
        if (signal?.aborted) return reject(signal.reason)
        signal?.addEventListener('abort', abort, { once: true })
        if (waiting) waiting.push(grant)
        else {
          held.set(name, [grant])
          grant()
        }
      })
    },
  }
}

function safely(storage: QueueStorage | null, warn: (message: string) => void) {
  const refused = (cause: unknown) =>
    warn(`The message queue could not be kept in storage: ${String(cause)}`)
  return {
    get(key: string): string | null {
      try {
        return storage?.getItem(key) ?? null
      } catch (cause) {
        refused(cause)
        return null
      }
    },
    set(key: string, value: string | null): void {
      try {
        if (value === null) storage?.removeItem(key)
        else storage?.setItem(key, value)
      } catch (cause) {
        refused(cause)
      }
    },
  }
}

/** The queue's part of one session. */
export function queueHost(
  session: {
    key: ThreadKey
    scope: string
    tab: string
    warn(message: string): void
    now(): number
  },
  options: QueueHostOptions,
): ExtensionPart {
  const thread = JSON.stringify([session.key.projectId, session.key.agentId, session.key.threadId])
  const storageKey = `preview-chat:queue:${session.scope}:${thread}`
  const storage = safely(options.storage, session.warn)
  const { locks } = options
  let dispatch: ((action: EngineAction) => void) | null = null
  const hear = (raw: string | null) => dispatch?.({ type: 'queue-stored', stored: raw })
  const onStorage = (event: StorageEvent) => {
    if (event.key === storageKey || event.key === null) hear(storage.get(storageKey))
  }
  const window = globalThis as {
    addEventListener?: typeof addEventListener
    removeEventListener?: typeof removeEventListener
  }
  const write = (raw: string | null) => {
    storage.set(storageKey, raw)
    for (const peer of peers.get(storageKey) ?? []) if (peer !== hear) peer(raw)
  }
  let shown: { queue: EngineState['queue']; fields: Partial<SessionState> } | null = null
  const act = (action: EngineAction) => dispatch?.(action)
  const actions = {
    editQueued: (id: string, text: string) => act({ type: 'queue-edit', id, text }),
    removeQueued: (id: string) => act({ type: 'queue-remove', id }),
    reorderQueued: (id: string, toIndex: number) => act({ type: 'queue-reorder', id, to: toIndex }),
    sendQueuedNow: (id: string) => act({ type: 'queue-send-now', id }),
    resumeQueue: () => act({ type: 'queue-resume' }),
  }
  const perform = (command: Command): boolean => {
    if (command.type === 'queue-store') {
      const { stored } = command
      const empty = stored.items.length === 0 && !stored.paused && stored.dedupes === null
      write(empty ? null : serializeQueue(stored))
      return true
    }
    if (command.type !== 'queue-lock') return false
    const locked = () => dispatch?.({ type: 'queue-locked', stored: storage.get(storageKey) })
    locks.request(`preview-chat:queue-write:${storageKey}`, {}, locked).catch((cause: unknown) => {
      // A lock refused (an opaque origin, say): written without it, as one tab would.
      session.warn(
        `The message queue's write lock was refused (${String(cause)}); writing without it.`,
      )
      locked()
    })
    return true
  }
  return {
    start(next) {
      dispatch = next
      let set = peers.get(storageKey)
      if (!set) peers.set(storageKey, (set = new Set()))
      set.add(hear)
      window.addEventListener?.('storage', onStorage as EventListener)
      next({
        type: 'queue-attached',
        stored: storage.get(storageKey),
        whenStopped: options.whenStopped,
        at: session.now(),
      })
    },
    perform,
    view(state, view) {
      const queue = state.queue
      if (!shown || shown.queue !== queue) {
        const items = queue?.view.items ?? []
        const sameItems =
          shown?.fields.queue?.length === items.length &&
          items.every((item, i) => sameItem(shown?.fields.queue?.[i], item))
        shown = {
          queue,
          fields: {
            queue:
              sameItems && shown?.fields.queue ? shown.fields.queue : items.map(toQueuedMessage),
            queuePaused: queue?.view.paused ?? false,
            ...actions,
          },
        }
      }
      const { fields } = shown
      return view.queue === fields.queue && view.queuePaused === fields.queuePaused
        ? view
        : { ...view, ...fields }
    },
    follow() {
      const controller = new AbortController()
      let release: (() => void) | null = null
      locks
        .request(`preview-chat:queue-send:${storageKey}`, { signal: controller.signal }, () => {
          if (controller.signal.aborted) return
          dispatch?.({ type: 'queue-sender', held: true })
          return new Promise<void>((resolve) => (release = resolve))
        })
        .catch(() => {
          // Given up before it was granted (the session stopped following): nothing to release.
        })
      return () => {
        controller.abort()
        if (release) dispatch?.({ type: 'queue-sender', held: false })
        release?.()
        release = null
      }
    },
    close() {
      peers.get(storageKey)?.delete(hear)
      if (peers.get(storageKey)?.size === 0) peers.delete(storageKey)
      window.removeEventListener?.('storage', onStorage as EventListener)
      dispatch = null
    },
  }
}

const sameItem = (a: QueuedMessage | undefined, b: StoredQueueItem) =>
  a !== undefined &&
  a.id === b.id &&
  a.text === b.text &&
  a.status === b.status &&
  a.error?.message === b.error?.message

function toQueuedMessage(item: StoredQueueItem): QueuedMessage {
  return {
    id: item.id,
    text: item.text,
    status: item.status,
    ...(item.error && { error: fromErrorRecord(item.error) }),
  }
}
