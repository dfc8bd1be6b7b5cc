/**
 * The queue's side of the host ([decision](../../../../docs/decisions/client-queue.md)): where a
 * thread's queue is kept (a `QueueStore`: IndexedDB in a browser, shared by the scope's tabs),
 * the sender lock of the one tab that sends, what other tabs wrote, and the server's queue routes.
 * It decides nothing: it performs the reducer's queue commands (`queue-open` … `queue-close`, a
 * `queue-lock` transaction inside which the reducer decides and its `queue-store` is written) and
 * hands back what came of them raw — what the store holds, a push's thread, a hand-over's first
 * event or its failure — to be parsed and judged in `engine/queue/`.
 */
import type { Command, EngineAction } from '../engine/model'
import { type QueuePostHeard, type ServerQueueCall, type WhenStopped } from '../engine/queue/model'
import { queueOf, type QueuedState } from '../engine/queue/state'
import { selectSessionState, type SessionState } from '../engine/select'
import { flushedQueue, storedValue } from '../engine/queue/stored'
import { queueFields, queueGate } from '../engine/queue/view'
import { failureRecord, toErrorRecord, toPreviewChatError } from '../wire/contract/errors'
import { readQueuePushMessage } from '../wire/contract/push'
import {
  parseMessageQueue,
  parseQueueItem,
  parseQueueRemoveAnswer,
  queueConflictOf,
  type MessageQueue,
} from '../wire/contract/queue'
import type { ParseResult } from '../wire/contract/result'
import { readTurnStream, threadPath } from '../wire/transport'
import { onPageHide } from '../platform/pageHide'
import type { ThreadKey } from '../wire/contract/ids'
import type { ExtensionPart, ExtensionSelect, SessionContext } from './context'
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
  /** Whether `store` keeps the queue across reloads (default `true`). */
  kept?: boolean
  /** The store to use where `store` cannot be opened (this document's memory). */
  fallback: () => QueueStore
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

/** The queue's part of one session: it performs the reducer's queue commands, and adds the view's fields. */
export function queueHost(
  dispatch: (action: EngineAction) => void,
  context: Pick<SessionContext, 'queryKey' | 'warn' | 'timers' | 'transport' | 'listenToPush'>,
  options: QueueHostOptions,
): ExtensionPart & { select: ExtensionSelect } {
  // The history's query key names the scope and the thread (`['preview-chat', scope, …]`).
  const [, scope, projectId, agentId, threadId] = context.queryKey as string[]
  const key = queueStorageKey({ scope, projectId, agentId, threadId } as QueueKey)
  const thread = { projectId, agentId, threadId } as ThreadKey
  const server = serverQueueCalls(context.transport, thread, (action) => act(action))
  const { locks } = options
  let store = options.store
  let kept = options.kept ?? true
  let open = true
  const act = (action: EngineAction) => {
    if (open) dispatch(action)
  }
  const refused = (what: string) => (cause: unknown) =>
    context.warn(`The message queue could not ${what}: ${String(cause)}`)
  const hear = () =>
    void store.read(key).then((stored) => act({ type: 'queue-stored', stored }), refused('be read'))
  // A page being left writes what its transaction has not yet (best effort: the page may go first).
  const onLeave = () => act({ type: 'queue-leaving' })
  let unhide: (() => void) | undefined
  let unwatch = () => {}
  const openStore = () => {
    unwatch()
    unwatch = store.watch(key, hear)
    store.read(key).then(
      (stored) =>
        act({
          type: 'queue-attached',
          stored,
          kept,
          whenStopped: options.whenStopped,
          at: context.timers.now(),
        }),
      (cause: unknown) =>
        act({
          type: 'queue-store-refused',
          error: failureRecord(cause, 'unsupported', 'The queue store could not be opened'),
        }),
    )
  }
  /** What the reducer wrote (`queue-store`) while the host held the store's transaction. */
  let written: string | null | undefined
  const lock = () => {
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
  /**
   * The server's queue push, checked, handed over with the thread it names: the push channel
   * hands every message to every listener, unchecked, and this one reads only its own type.
   */
  const onMessage = (message: unknown) => {
    const parsed = readQueuePushMessage(message)
    if (parsed.kind === 'invalid') context.warn(`Ignored a push message: ${parsed.error.message}`)
    // The schema's object holds the thread's three ids, no more.
    if (parsed.kind === 'message')
      act({ type: 'queue-server-changed', thread: parsed.message.data })
  }
  let unlisten = () => {}
  /** The sender lock, held while the session is followed. */
  type Sender = { controller: AbortController; release: (() => void) | null }
  let sender: Sender | null = null
  const follow = () => {
    unlisten()
    unlisten = context.listenToPush({ onMessage })
    if (sender) return
    const held: Sender = { controller: new AbortController(), release: null }
    sender = held
    locks
      .request(`preview-chat:queue-send:${key}`, { signal: held.controller.signal }, () => {
        if (held.controller.signal.aborted) return
        // The new sender starts from the store as it is now (unread: from its next transaction).
        store.read(key).then(
          (stored) => act({ type: 'queue-sender', held: true, stored }),
          () => act({ type: 'queue-sender', held: true, stored: null }),
        )
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
  const close = () => {
    unfollow()
    server.abort()
    open = false
    unwatch()
    unhide?.()
  }
  const perform = (command: Command) => {
    switch (command.type) {
      case 'queue-open':
        unhide?.()
        unhide = onPageHide(onLeave)
        return openStore()
      case 'queue-fallback':
        store = options.fallback()
        kept = false
        return openStore()
      case 'queue-follow':
        return follow()
      case 'queue-unfollow':
        return unfollow()
      case 'queue-close':
        return close()
      case 'queue-lock':
        return lock()
      case 'queue-store':
        written = storedValue(command.stored)
        return
      case 'queue-flush':
        void store
          .update(key, (stored) => storedValue(flushedQueue(stored, command.changes)))
          .catch(refused('be written'))
        return
      case 'queue-read-server':
        return server.read(command.seq)
      case 'queue-post':
        return server.post(command.token, command.id, command.text)
      case 'queue-call':
        return server.call(command.call)
    }
  }

  let shown: { queue: QueuedState['queue']; fields: Partial<SessionState> } | null = null
  const actions = {
    editQueued: (id: string, text: string) => act({ type: 'queue-edit', id, text }),
    removeQueued: (id: string) => act({ type: 'queue-remove', id }),
    reorderQueued: (id: string, toIndex: number) => act({ type: 'queue-reorder', id, to: toIndex }),
    sendQueuedNow: (id: string) => act({ type: 'queue-send-now', id }),
    resumeQueue: () => act({ type: 'queue-resume' }),
  }
  const select: ExtensionSelect = (state, previous) => {
    const view = selectSessionState(state, previous)
    const queue = queueOf(state)
    if (!shown || shown.queue !== queue)
      shown = { queue, fields: { ...queueFields(queue, shown?.fields.queue), ...actions } }
    const { fields } = shown
    const gate = queueGate(view, state)
    return view.queue === fields.queue &&
      view.queuePaused === fields.queuePaused &&
      view.queueKept === fields.queueKept &&
      view.canSend === gate.canSend &&
      view.canSubmit === gate.canSubmit
      ? view
      : { ...view, ...fields, ...gate }
  }
  return { select, perform }
}

/** A queue route: its path under the thread, its method, its answer's parser, and its body. */
type Route<T> = [
  path: string,
  method: string,
  parse: (body: unknown) => ParseResult<T>,
  body?: object,
]

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
  const base = threadPath(thread)
  /**
   * A JSON call under the thread (`path`, `method`, the answer's parser, a body where it has
   * one), through the transport's own (`call`): the client's base URL, headers and timeout.
   */
  const callThread = <T>(
    [path, method, parse, body]: Route<T>,
    what: string,
    signal: AbortSignal,
  ): Promise<T> =>
    transport.call(
      base + path,
      {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      },
      what,
      parse,
      signal,
    )
  /** Runs one request, abortable by `abort()`; `failed` is not called once it was aborted. */
  const run = <T>(
    request: (signal: AbortSignal) => Promise<T>,
    done: (value: T) => unknown,
    failed: (cause: unknown) => unknown,
  ) => {
    const controller = new AbortController()
    controllers.add(controller)
    request(controller.signal)
      .then(done, (cause: unknown) => controller.signal.aborted || failed(cause))
      .finally(() => controllers.delete(controller))
    return controller
  }
  const route = (call: ServerQueueCall): Route<unknown> => {
    const item = `/queue/${encodeURIComponent(call.queueId)}`
    switch (call.op) {
      case 'edit':
        return [item, 'PATCH', parseQueueItem, { message: call.text }]
      case 'remove':
        return [item, 'DELETE', parseQueueRemoveAnswer]
      case 'reorder': {
        const { targetQueueId, expectedQueueIds } = call
        return [`${item}/reorder`, 'POST', parseMessageQueue, { targetQueueId, expectedQueueIds }]
      }
      case 'steer':
        return [`${item}/steer`, 'POST', parseQueueItem, { executionId: call.executionId }]
    }
  }
  return {
    read(seq: number) {
      const what = 'The message queue read'
      run(
        (signal) => callThread(['/queue', 'GET', parseMessageQueue], what, signal),
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
        (cause) =>
          act({
            type: 'queue-server-read',
            seq,
            error: failureRecord(cause, 'network_error', what),
          }),
      )
    },
    call(call: ServerQueueCall) {
      const what = 'Changing the message queue'
      run(
        (signal) => callThread(route(call), what, signal),
        () => act({ type: 'queue-called', call, error: null, conflict: null }),
        (cause) => {
          const error = toPreviewChatError(cause, 'network_error', what)
          act({
            type: 'queue-called',
            call,
            error: toErrorRecord(error),
            conflict: queueConflictOf(error),
          })
        },
      )
    },
    /**
     * POSTs the message and reads its stream until the server's first word, then closes it (what
     * the platform's own web client does to a stream whose message waits): the message is the
     * server's from `message-queued` on, and its turn is followed as any other once taken up.
     */
    post(token: number, id: string, text: string) {
      let heard = false
      const hear = (what: QueuePostHeard) => {
        if (heard) return
        heard = true
        controller.abort()
        act({ type: 'queue-posted', token, heard: what })
      }
      const request = {
        kind: 'message' as const,
        body: { message: text, sessionId: thread.threadId, messageId: id },
      }
      // Once heard, its own abort is no failure: `hear` takes only the first word.
      const controller = run(
        (signal) =>
          transport
            .openTurn(thread, request, signal)
            .then(({ body }) =>
              readTurnStream(body, ([event]) => event && hear({ event }), signal),
            ),
        (end) => end.kind === 'cut' && hear({ cut: toErrorRecord(end.error) }),
        (cause) =>
          hear({
            failed: toErrorRecord(
              toPreviewChatError(cause, 'network_error', 'Sending the queued message'),
            ),
          }),
      )
    },
    /** The session stopped following: answers still on their way are not wanted. */
    abort() {
      for (const controller of controllers) controller.abort()
      controllers.clear()
    },
  }
}
