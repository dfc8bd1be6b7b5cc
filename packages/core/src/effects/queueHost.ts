/**
 * The queue's side of the host ([decision](../../../../docs/decisions/client-queue.md)): where a
 * thread's queue is kept (a `QueueStore`: IndexedDB in a browser, shared by the scope's tabs),
 * the sender lock of the one tab that sends, and what other tabs wrote. It decides nothing: the
 * reducer's `queue-lock` (a read-modify-write transaction of the store, inside which the reducer
 * decides and its `queue-store` is written) and `queue-flush` are performed, and what the store
 * holds is handed to the reducer raw, to be parsed there.
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
import type { ExtensionSelect, ExtensionSession, SessionContext } from './context'
import type { QueueStore } from './queueStore'

/** The part of the Web Locks API the queue uses (`navigator.locks`). */
export interface LockManagerLike {
  request(
    name: string,
    options: { signal?: AbortSignal },
    callback: (lock: unknown) => unknown,
  ): Promise<unknown>
}

export interface QueueHostOptions {
  whenStopped: WhenStopped
  store: QueueStore
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

/** The queue's part of one session: it hears the session's steps, and performs its commands. */
export function queueHost(
  session: ExtensionSession,
  dispatch: (action: EngineAction) => void,
  context: Pick<SessionContext, 'queryKey' | 'warn' | 'timers'>,
  options: QueueHostOptions,
): ExtensionSelect {
  // The history's query key names the scope and the thread (`['preview-chat', scope, …]`).
  const [, scope, projectId, agentId, threadId] = context.queryKey as string[]
  const key = queueStorageKey({ scope, projectId, agentId, threadId } as QueueKey)
  const { store, locks } = options
  let open = true
  const act = (action: EngineAction) => {
    if (open) dispatch(action)
  }
  const refused = (what: string) => (cause: unknown) =>
    context.warn(`The message queue could not ${what}: ${String(cause)}`)
  /** What the store holds now, handed to the reducer as `make` says (raw: parsed there). */
  const readThen = (make: (stored: string | null) => EngineAction) =>
    void store.read(key).then((stored) => act(make(stored)), refused('be read'))
  const hear = () => readThen((stored) => ({ type: 'queue-stored', stored }))
  // A page being left writes what its transaction has not yet (best effort: the page may go first).
  const onLeave = () => act({ type: 'queue-leaving' })
  const window = globalThis as {
    addEventListener?: typeof addEventListener
    removeEventListener?: typeof removeEventListener
  }
  const write = (stored: StoredQueue) => {
    const empty = stored.items.length === 0 && !stored.paused && stored.dedupes === null
    return empty ? null : serializeQueue(stored)
  }
  /** What the reducer wrote (`queue-store`) while the host held the store's transaction. */
  let written: string | null | undefined
  const perform = (command: Command) => {
    if (command.type === 'queue-store') written = write(command.stored)
    else if (command.type === 'queue-flush')
      void store
        .update(key, (stored) => write(flushedQueue(stored, command.changes)))
        .catch(refused('be written'))
    else if (command.type === 'queue-lock') {
      let wrote = false
      store
        .update(key, (stored) => {
          // The reducer decides inside the transaction; its `queue-store` is what is written.
          written = undefined
          act({ type: 'queue-locked', stored })
          wrote = written !== undefined
          return written
        })
        // Committed: a message it marked `sending` may go now.
        .then(() => wrote && act({ type: 'queue-written' }), refused('be written'))
    }
  }
  /** The sender lock, held while the session is followed. */
  let sender: { controller: AbortController; release: (() => void) | null } | null = null
  const follow = () => {
    const held: NonNullable<typeof sender> = { controller: new AbortController(), release: null }
    sender = held
    locks
      .request(`preview-chat:queue-send:${key}`, { signal: held.controller.signal }, () => {
        if (held.controller.signal.aborted) return
        // The new sender starts from the store as it is now.
        readThen((stored) => ({ type: 'queue-sender', held: true, stored }))
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
  let unwatch = () => {}
  const start = () => {
    unwatch = store.watch(key, hear)
    window.addEventListener?.('pagehide', onLeave)
    readThen((stored) => ({
      type: 'queue-attached',
      stored,
      whenStopped: options.whenStopped,
      at: context.timers.now(),
    }))
  }
  const close = () => {
    unfollow()
    open = false
    unwatch()
    window.removeEventListener?.('pagehide', onLeave)
  }
  session.inspect(({ action, commands }) => {
    // Its commands first (a `queue-store` is what the transaction in progress writes).
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
