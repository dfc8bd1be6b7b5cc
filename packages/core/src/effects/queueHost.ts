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
  QueuePostAnswer,
  ServerQueueCall,
  StoredQueue,
  WhenStopped,
} from '../engine/model'
import { selectSessionState, type QueuedMessage, type SessionState } from '../engine/select'
import { flushedQueue, serializeQueue } from '../engine/slices/queue'
import { shownQueue, type ShownQueueItem } from '../engine/slices/queueServer'
import {
  failureRecord,
  fromErrorRecord,
  inBandError,
  toErrorRecord,
  toPreviewChatError,
} from '../wire/contract/errors'
import { readQueuePushMessage, parseQueuePushMessage } from '../wire/contract/push'
import {
  parseMessageQueue,
  parseQueueItem,
  parseQueueRemoveAnswer,
  queueConflictOf,
  type MessageQueue,
} from '../wire/contract/queue'
import type { ParseResult } from '../wire/contract/result'
import { readTurnStream } from '../wire/transport'
import type { ThreadKey } from '../wire/contract/ids'
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
  context: Pick<SessionContext, 'queryKey' | 'warn' | 'timers' | 'transport' | 'listenToPush'>,
  options: QueueHostOptions,
): ExtensionSelect {
  // The history's query key names the scope and the thread (`['preview-chat', scope, …]`).
  const [, scope, projectId, agentId, threadId] = context.queryKey as string[]
  const key = queueStorageKey({ scope, projectId, agentId, threadId } as QueueKey)
  const thread = { projectId, agentId, threadId } as ThreadKey
  const server = serverQueueCalls(context.transport, thread, (action) => act(action))
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
    if (command.type === 'queue-read-server') server.read(command.seq)
    else if (command.type === 'queue-post') server.post(command.token, command.id, command.text)
    else if (command.type === 'queue-call') server.call(command.call)
    else if (command.type === 'queue-store') written = write(command.stored)
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
        // Committed: a message it marked `sending` may go now. Failed: the reducer keeps it all.
        .then(
          () => wrote && act({ type: 'queue-written' }),
          (cause: unknown) =>
            act({
              type: 'queue-store-failed',
              error: failureRecord(cause, 'unsupported', 'The queue store refused the write'),
            }),
        )
    }
  }
  /** The server's queue push of this thread (push goes to every member of a project). */
  const onFrame = (frame: unknown) => {
    const parsed =
      typeof frame === 'string' ? parseQueuePushMessage(frame) : readQueuePushMessage(frame)
    if (parsed.kind === 'invalid') context.warn(`Ignored a push message: ${parsed.error.message}`)
    if (parsed.kind !== 'message') return
    const { data } = parsed.message
    if (data.threadId === threadId && data.agentId === agentId && data.projectId === projectId)
      act({ type: 'queue-server-changed' })
  }
  let unlisten = () => {}
  /** The sender lock, held while the session is followed. */
  let sender: { controller: AbortController; release: (() => void) | null } | null = null
  const follow = () => {
    unlisten = context.listenToPush({ onMessage: () => {}, onOther: onFrame })
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
    unlisten()
    unlisten = () => {}
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
    server.abort()
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
      const items = queue ? shownQueue(queue) : []
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

const sameItem = (a: QueuedMessage | undefined, b: ShownQueueItem) =>
  a !== undefined &&
  a.id === b.id &&
  a.text === b.text &&
  a.status === b.status &&
  a.queueId === b.queueId &&
  a.error?.message === b.error?.message

function toQueuedMessage(item: ShownQueueItem): QueuedMessage {
  return {
    id: item.id,
    text: item.text,
    status: item.status,
    ...(item.error && { error: fromErrorRecord(item.error) }),
    ...(item.queueId !== undefined && { queueId: item.queueId }),
  }
}

/** Codes of a POST that got no usable answer: the server may have taken the message anyway. */
const mayHaveBeenTaken = new Set(['network_error', 'server_error', 'invalid_response', 'timeout'])

/**
 * The server's queue routes (`next-era.md`) and the hand-over POST, performed for the reducer:
 * each answer is checked by the contract's parsers and dispatched; nothing here decides.
 */
function serverQueueCalls(
  transport: SessionContext['transport'],
  thread: ThreadKey,
  act: (action: EngineAction) => void,
) {
  const controllers = new Set<AbortController>()
  const track = () => {
    const controller = new AbortController()
    controllers.add(controller)
    return controller
  }
  const route = (call: ServerQueueCall) => {
    const item = `/queue/${encodeURIComponent(call.queueId)}`
    switch (call.op) {
      case 'edit':
        return { path: item, method: 'PATCH', body: { message: call.text }, parse: parseQueueItem }
      case 'remove':
        return { path: item, method: 'DELETE', parse: parseQueueRemoveAnswer }
      case 'reorder': {
        const { targetQueueId, expectedQueueIds } = call
        const body = { targetQueueId, expectedQueueIds }
        return { path: `${item}/reorder`, method: 'POST', body, parse: parseMessageQueue }
      }
      case 'steer': {
        const body = { executionId: call.executionId }
        return { path: `${item}/steer`, method: 'POST', body, parse: parseQueueItem }
      }
    }
  }
  return {
    read(seq: number) {
      const controller = track()
      transport
        .callThread(
          thread,
          '/queue',
          'GET',
          undefined,
          'The message queue read',
          parseMessageQueue,
          controller.signal,
        )
        .then(
          (queue: MessageQueue) =>
            act({
              type: 'queue-server-read',
              seq,
              server: {
                steerable: queue.steerableExecutionId,
                items: queue.items.map((item) => ({
                  queueId: item.id,
                  text: item.message,
                  steering: item.steeringExecutionId !== null,
                })),
              },
            }),
          (cause: unknown) =>
            controller.signal.aborted ||
            act({
              type: 'queue-server-read',
              seq,
              error: failureRecord(cause, 'network_error', 'The message queue read'),
            }),
        )
        .finally(() => controllers.delete(controller))
    },
    call(call: ServerQueueCall) {
      const controller = track()
      const { path, method, body, parse } = route(call)
      transport
        .callThread(
          thread,
          path,
          method,
          body,
          'Changing the message queue',
          parse as (body: unknown) => ParseResult<unknown>,
          controller.signal,
        )
        .then(
          () => act({ type: 'queue-called', call, error: null, conflict: null }),
          (cause: unknown) => {
            if (controller.signal.aborted) return
            const error = toPreviewChatError(cause, 'network_error', 'Changing the message queue')
            act({
              type: 'queue-called',
              call,
              error: toErrorRecord(error),
              conflict: queueConflictOf(error),
            })
          },
        )
        .finally(() => controllers.delete(controller))
    },
    /**
     * POSTs the message and reads its stream until the server's first word, then closes it (what
     * the platform's own web client does to a stream whose message waits): the message is the
     * server's from `message-queued` on, and its turn is followed as any other once taken up.
     */
    post(token: number, id: string, text: string) {
      const controller = track()
      let answer: QueuePostAnswer | null = null
      const settle = (found: QueuePostAnswer) => {
        if (answer) return
        answer = found
        controller.abort()
        act({ type: 'queue-posted', token, answer: found })
      }
      const request = {
        kind: 'message' as const,
        body: { message: text, sessionId: thread.threadId, messageId: id },
      }
      transport
        .openTurn(thread, request, controller.signal)
        .then(({ body }) =>
          readTurnStream(
            body,
            ([first]) => {
              if (!first) return
              if (first.type === 'message-queued')
                settle({ kind: 'queued', queueId: first.queueId })
              else if (first.type === 'error')
                settle({ kind: 'refused', error: inBandError(first) })
              else settle(first.type === 'done' ? { kind: 'duplicate' } : { kind: 'started' })
            },
            controller.signal,
          ),
        )
        .then(
          (end) => {
            if (end.kind === 'cut') settle({ kind: 'lost', error: toErrorRecord(end.error) })
          },
          (cause: unknown) => {
            if (answer) return
            const error = toPreviewChatError(cause, 'network_error', 'Sending the queued message')
            const lost = mayHaveBeenTaken.has(error.code)
            settle({ kind: lost ? 'lost' : 'refused', error: toErrorRecord(error) })
          },
        )
        .finally(() => controllers.delete(controller))
    },
    /** The session stopped following: answers still on their way are not wanted. */
    abort() {
      for (const controller of controllers) controller.abort()
      controllers.clear()
    },
  }
}
