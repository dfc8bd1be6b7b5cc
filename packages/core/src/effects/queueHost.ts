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
  StoredQueue,
  StoredQueueItem,
  WhenStopped,
} from '../engine/model'
import { selectSessionState, type QueuedMessage, type SessionState } from '../engine/select'
import { flushedQueue, serializeQueue } from '../engine/slices/queue'
import { fromErrorRecord } from '../wire/contract/errors'
import type { ExtensionSelect, SessionContext } from './context'
import type { PreviewChatSession } from './session'

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

/** Which thread's queue, in which scope (the client's `scope`; `''` when it has none). */
export interface QueueKey {
  scope?: string
  projectId: string
  agentId: string
  threadId: string
}

/** Where a thread's queue is kept: `preview-chat:queue:<scope>:<[projectId, agentId, threadId] as JSON>`. */
export const queueStorageKey = ({ scope = '', projectId, agentId, threadId }: QueueKey) =>
  `preview-chat:queue:${scope}:${JSON.stringify([projectId, agentId, threadId])}`

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

/** The queue's part of one session: it hears the session's steps, and performs its commands. */
export function queueHost(
  session: PreviewChatSession,
  dispatch: (action: EngineAction) => void,
  context: Pick<SessionContext, 'queryKey' | 'warn' | 'timers'>,
  options: QueueHostOptions,
): ExtensionSelect {
  // The history's query key names the scope and the thread (`['preview-chat', scope, …]`).
  const [, scope, projectId, agentId, threadId] = context.queryKey as string[]
  const storageKey = queueStorageKey({ scope, projectId, agentId, threadId } as QueueKey)
  const storage = safely(options.storage, context.warn)
  const { locks } = options
  let open = true
  const act = (action: EngineAction) => {
    if (open) dispatch(action)
  }
  const hear = (raw: string | null) => act({ type: 'queue-stored', stored: raw })
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
  // A page being left writes what its write lock has not yet (the lock's callback may never run).
  const onLeave = () => act({ type: 'queue-leaving' })
  const locked = () => act({ type: 'queue-locked', stored: storage.get(storageKey) })
  const store = (stored: StoredQueue) => {
    const empty = stored.items.length === 0 && !stored.paused && stored.dedupes === null
    write(empty ? null : serializeQueue(stored))
  }
  const perform = (command: Command) => {
    if (command.type === 'queue-store') store(command.stored)
    else if (command.type === 'queue-flush')
      store(flushedQueue(storage.get(storageKey), command.changes))
    else if (command.type === 'queue-lock')
      locks
        .request(`preview-chat:queue-write:${storageKey}`, {}, locked)
        .catch((cause: unknown) => {
          // A lock refused (an opaque origin, say): written without it, as one tab would.
          context.warn(
            `The message queue's write lock was refused (${String(cause)}); writing without it.`,
          )
          locked()
        })
  }
  /** The sender lock, held while the session is followed. */
  let sender: { controller: AbortController; release: (() => void) | null } | null = null
  const follow = () => {
    const held: NonNullable<typeof sender> = { controller: new AbortController(), release: null }
    sender = held
    locks
      .request(`preview-chat:queue-send:${storageKey}`, { signal: held.controller.signal }, () => {
        if (held.controller.signal.aborted) return
        act({ type: 'queue-sender', held: true, stored: storage.get(storageKey) })
        return new Promise<void>((resolve) => (held.release = resolve))
      })
      .catch(() => {
        // Given up before it was granted (the session stopped following): nothing to release.
      })
  }
  const unfollow = () => {
    if (!sender) return
    sender.controller.abort()
    if (sender.release) act({ type: 'queue-sender', held: false })
    sender.release?.()
    sender = null
  }
  const start = () => {
    let set = peers.get(storageKey)
    if (!set) peers.set(storageKey, (set = new Set()))
    set.add(hear)
    window.addEventListener?.('storage', onStorage as EventListener)
    window.addEventListener?.('pagehide', onLeave)
    act({
      type: 'queue-attached',
      stored: storage.get(storageKey),
      whenStopped: options.whenStopped,
      at: context.timers.now(),
    })
  }
  const close = () => {
    unfollow()
    open = false
    peers.get(storageKey)?.delete(hear)
    if (peers.get(storageKey)?.size === 0) peers.delete(storageKey)
    window.removeEventListener?.('storage', onStorage as EventListener)
    window.removeEventListener?.('pagehide', onLeave)
  }
  session.inspect(({ action, commands }) => {
    // Its commands first: a `queue-store` is written before the same step's POST goes out.
    for (const command of commands) perform(command)
    if (action.type === 'mounted') start()
    else if (action.type === 'activated') follow()
    else if (action.type === 'deactivated') unfollow()
    else if (action.type === 'disposed') close()
  })

  let shown: { queue: EngineState['queue']; fields: Partial<SessionState> } | null = null
  const actions = {
    editQueued: (id: string, text: string) => act({ type: 'queue-edit', id, text }),
    removeQueued: (id: string) => act({ type: 'queue-remove', id }),
    reorderQueued: (id: string, toIndex: number) => act({ type: 'queue-reorder', id, to: toIndex }),
    sendQueuedNow: (id: string) => act({ type: 'queue-send-now', id }),
    resumeQueue: () => act({ type: 'queue-resume' }),
  }
  return (state, previous) => {
    const view = selectSessionState(state, previous)
    const queue = state.queue
    if (!shown || shown.queue !== queue) {
      const items = queue?.view.items ?? []
      const before = shown?.fields.queue
      const same =
        before?.length === items.length && items.every((item, i) => sameItem(before[i], item))
      shown = {
        queue,
        fields: {
          queue: same && before ? before : items.map(toQueuedMessage),
          queuePaused: queue?.view.paused ?? false,
          ...actions,
        },
      }
    }
    const { fields } = shown
    // With a queue, a message can always be sent: it waits in the queue while the thread is busy.
    const canSubmit = view.draft.trim() !== ''
    return view.queue === fields.queue &&
      view.queuePaused === fields.queuePaused &&
      view.canSend &&
      view.canSubmit === canSubmit
      ? view
      : { ...view, ...fields, canSend: true, canSubmit }
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
