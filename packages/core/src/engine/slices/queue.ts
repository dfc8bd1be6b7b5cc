/**
 * The message queue ([decision](../../../../../docs/decisions/client-queue.md)): a reducer around
 * the engine's (`withQueue(reduce)`), pure like it, that only `@preview-chat/core/queue` imports,
 * so that a client without a queue carries none of it.
 *
 * What it decides, from actions only:
 * - `submit()` while the thread is busy, or behind messages still queued, adds the message to the
 *   queue (never to the transcript: it shows there once its turn begins) and clears the draft;
 * - the queue is one per thread, kept in a store shared by every tab of the scope (IndexedDB):
 *   each change is applied to what the store holds inside one of its read-write transactions
 *   (`queue-lock`, then `queue-locked`), so that no tab's change is lost to another's write;
 * - only the tab holding the sender lock sends, one message at a time, when the thread is free,
 *   in order; a message is marked `sending` in the store, committed (`queue-written`), before its
 *   POST goes out, so that its fate
 *   is judged, never guessed, if that tab goes away: a later read shows the message (its
 *   `messageId` on the record's user message), or the next sender sends it again where the server
 *   dedupes, or marks it `undelivered` where a second POST could run it twice;
 * - a Stop, or a turn that failed, keeps, pauses or returns the queue to the draft (`whenStopped`).
 */
import { errorRecord, type ErrorRecord } from '../../wire/contract/errors'
import {
  array,
  boolean,
  nullable,
  number,
  object,
  optional,
  picklist,
  string,
  FAIL,
  type Schema,
} from '../../wire/contract/schema'
import { heldByAnotherTab, sessionStatus } from '../derive'
import { step } from './common'
import {
  callProblem,
  handsOver,
  learnHanded,
  serverItemAction,
  serverRead,
  shownQueue,
  waitsHere,
  wantServerRead,
} from './queueServer'
import type {
  Command,
  EngineAction,
  EngineConfig,
  EngineState,
  QueueChange,
  QueueState,
  Reducer,
  Step,
  StoredQueue,
  StoredQueueItem,
  WhenStopped,
} from '../model'

export const emptyQueue: StoredQueue = {
  items: [],
  paused: false,
  dedupes: null,
  serverQueue: null,
  serverRev: 0,
}

/** The version of the stored queue's shape: another one is not read (it is replaced on write). */
export const QUEUE_VERSION = 1

const errorSchema: Schema<ErrorRecord> = object({
  code: string,
  message: string,
}) as Schema<ErrorRecord>

const storedSchema = object({
  v: picklist([String(QUEUE_VERSION)]),
  items: array(
    object({
      id: string,
      text: string,
      status: picklist(['queued', 'sending', 'undelivered']),
      error: optional(errorSchema),
      by: optional(string),
      queueId: optional(string),
    }),
  ),
  paused: boolean,
  dedupes: nullable(boolean),
  // Absent in what an earlier version wrote: not known.
  serverQueue: optional(nullable(boolean)),
  serverRev: optional(number),
})

/** What the store holds (a string from another tab, or from an older page), parsed; never trusted. */
export function parseStoredQueue(raw: unknown): StoredQueue | { problem: string } {
  if (raw === null || raw === undefined) return emptyQueue
  let json: unknown
  try {
    json = typeof raw === 'string' ? JSON.parse(raw) : FAIL
  } catch {
    json = FAIL
  }
  const parsed = json === FAIL ? FAIL : storedSchema(json)
  if (parsed === FAIL) return { problem: 'is not a queue this version of preview-chat wrote' }
  const ids = new Set<string>()
  const items = parsed.items.filter((item) => !ids.has(item.id) && ids.add(item.id))
  return {
    items,
    paused: parsed.paused,
    dedupes: parsed.dedupes,
    serverQueue: parsed.serverQueue ?? null,
    serverRev: parsed.serverRev ?? 0,
  }
}

/** The stored queue as the store keeps it (`parseStoredQueue` reads it back). */
export const serializeQueue = (queue: StoredQueue): string =>
  JSON.stringify({ v: String(QUEUE_VERSION), ...queue })

/** One change applied to a queue; a change about a message that is gone changes nothing. */
export function applyQueueChange(queue: StoredQueue, change: QueueChange): StoredQueue {
  const { items } = queue
  const index = 'id' in change ? items.findIndex((item) => item.id === change.id) : -1
  const item = items[index]
  const without = items.filter((_, i) => i !== index)
  switch (change.op) {
    case 'add':
      return items.some((i) => i.id === change.item.id)
        ? queue
        : { ...queue, items: [...items, change.item] }
    case 'edit':
      return !item || item.status === 'sending'
        ? queue
        : { ...queue, items: items.map((i) => (i === item ? { ...i, text: change.text } : i)) }
    case 'remove':
      return !item || item.status === 'sending' ? queue : { ...queue, items: without }
    case 'done':
      return item ? { ...queue, items: without } : queue
    case 'move': {
      if (!item || change.before === change.id) return queue
      const at = without.findIndex((i) => i.id === change.before)
      const moved = [...without]
      moved.splice(at < 0 ? moved.length : at, 0, item)
      return { ...queue, items: moved }
    }
    case 'front': {
      if (!item || item.status === 'sending') return queue
      const again = item.status === 'queued' || change.retry === true
      const front: StoredQueueItem = again
        ? { id: item.id, text: item.text, status: 'queued' }
        : item
      return { ...queue, paused: false, items: [front, ...without] }
    }
    case 'mark': {
      if (!item) return queue
      const { id, text } = item
      const marked: StoredQueueItem = {
        id,
        text,
        status: change.status,
        ...(change.error && { error: change.error }),
        ...(change.by !== undefined && { by: change.by }),
      }
      return { ...queue, items: items.map((i) => (i === item ? marked : i)) }
    }
    case 'paused':
      return queue.paused === change.paused ? queue : { ...queue, paused: change.paused }
    case 'dedupes':
      return queue.dedupes === change.dedupes ? queue : { ...queue, dedupes: change.dedupes }
    case 'server-queue':
      return queue.serverQueue === change.serverQueue
        ? queue
        : { ...queue, serverQueue: change.serverQueue }
    case 'server-changed':
      return { ...queue, serverRev: queue.serverRev + 1 }
    case 'handed': {
      if (!item) return queue
      const handed: StoredQueueItem = {
        id: item.id,
        text: item.text,
        status: 'queued',
        queueId: change.queueId,
      }
      return { ...queue, items: items.map((i) => (i === item ? handed : i)) }
    }
  }
}

const applyAll = (queue: StoredQueue, changes: readonly QueueChange[]) =>
  changes.reduce(applyQueueChange, queue)

/** What a `queue-flush` writes: `changes` applied to what the store holds (junk read as empty). */
export function flushedQueue(raw: unknown, changes: readonly QueueChange[]): StoredQueue {
  const parsed = parseStoredQueue(raw)
  return applyAll('problem' in parsed ? emptyQueue : parsed, changes)
}

function attached(whenStopped: WhenStopped, stored: StoredQueue, at: number): QueueState {
  return {
    stored,
    pending: [],
    view: stored,
    locking: false,
    writing: null,
    sender: false,
    whenStopped,
    sending: null,
    sends: 0,
    judgeAfterRead: null,
    clock: at,
    server: null,
    serverReads: { asked: 0, applied: 0, inFlight: false, wanted: false },
    handedAt: {},
    handedPosts: {},
  }
}

const withQueueState = (state: EngineState, queue: QueueState): EngineState => ({ ...state, queue })

/** This tab's change: shown at once, written in the next transaction of the store. */
function change(queue: QueueState, ...changes: QueueChange[]): QueueState {
  const pending = [...queue.pending, ...changes]
  return { ...queue, pending, view: applyAll(queue.view, changes) }
}

/** A stored value that cannot be read is reported, and read as an empty queue (nothing throws). */
function readStored(raw: unknown, commands: Command[]): StoredQueue {
  const parsed = parseStoredQueue(raw)
  if ('problem' in parsed) {
    commands.push({
      type: 'warn',
      message: `The stored message queue ${parsed.problem}: it is read as empty, and written anew.`,
    })
    return emptyQueue
  }
  return parsed
}

const recordedIds = (state: EngineState): Set<string> => {
  const ids = new Set<string>()
  for (const message of state.recorded?.messages ?? [])
    if (message.messageId !== undefined) ids.add(message.messageId)
  return ids
}

/** Wraps the engine's reducer with the queue's decisions (see the file's comment). */
export function withQueue(base: Reducer): Reducer {
  return (state, action, config) => {
    if (action.type === 'queue-attached') {
      const commands: Command[] = []
      const stored = readStored(action.stored, commands)
      return settle(
        state,
        { state: withQueueState(state, attached(action.whenStopped, stored, action.at)), commands },
        action,
        config,
        base,
      )
    }
    const queue = state.queue
    if (!queue || state.disposed) return base(state, action, config)
    // Leaving with changes not written: written now, without the lock (the page will not wait).
    if (action.type === 'disposed' || action.type === 'queue-leaving') {
      const left = action.type === 'disposed' ? base(state, action, config) : step(state)
      if (queue.pending.length === 0) return left
      return {
        ...left,
        commands: [...left.commands, { type: 'queue-flush', changes: queue.pending }],
      }
    }
    const own = queueAction(state, queue, action)
    return settle(state, own ?? base(state, action, config), action, config, base)
  }
}

/** The queue's own actions, and `submit()` when the message must wait: `null` for the engine's. */
function queueAction(state: EngineState, queue: QueueState, action: EngineAction): Step | null {
  switch (action.type) {
    case 'queue-stored': {
      const commands: Command[] = []
      const stored = readStored(action.stored, commands)
      return {
        state: withQueueState(state, { ...queue, stored, view: applyAll(stored, queue.pending) }),
        commands,
      }
    }
    case 'queue-locked': {
      const commands: Command[] = []
      const before = readStored(action.stored, commands)
      let stored = applyAll(before, queue.pending)
      let next: QueueState = {
        ...queue,
        stored,
        view: stored,
        pending: [],
        locking: false,
        writing: { changes: queue.pending, before },
      }
      // The next message is chosen here, from what the store holds in the transaction (another
      // tab's message written before it is ahead of it), and marked `sending` in the same write:
      // its POST goes out once that write is committed (`queue-written`, `settle`).
      const head = stored.items.find(waitsHere)
      if (head && readyToSend(state, next)) {
        const token = -(queue.sends + 1)
        stored = applyQueueChange(stored, {
          op: 'mark',
          id: head.id,
          status: 'sending',
          by: state.tab,
        })
        next = {
          ...next,
          stored,
          view: stored,
          sends: queue.sends + 1,
          sending: { id: head.id, token, posted: false },
        }
      }
      commands.push({ type: 'queue-store', stored })
      return { state: withQueueState(state, next), commands }
    }
    case 'queue-written':
      return { state: withQueueState(state, { ...queue, writing: null }), commands: [] }
    case 'queue-store-failed': {
      // Nothing was written: its changes wait again, before those made since; a message it
      // marked `sending` was not posted (its POST waits for the commit), and waits again too.
      const { writing } = queue
      const pending = [...(writing?.changes ?? []), ...queue.pending]
      const stored = writing?.before ?? queue.stored
      const unsent = queue.sending && !queue.sending.posted
      const next: QueueState = {
        ...queue,
        stored,
        pending,
        view: applyAll(stored, pending),
        locking: false,
        writing: null,
        ...(unsent && { sending: null }),
      }
      return {
        state: withQueueState(state, next),
        commands: [
          {
            type: 'warn',
            message: `The message queue could not be written (${action.error.message}); its changes are kept in this tab and written at its next step.`,
          },
        ],
      }
    }
    case 'queue-sender': {
      if (!action.held)
        return { state: withQueueState(state, { ...queue, sender: false }), commands: [] }
      const commands: Command[] = []
      const stored = readStored(action.stored, commands)
      const next = { ...queue, sender: true, stored, view: applyAll(stored, queue.pending) }
      return { state: withQueueState(state, next), commands }
    }
    case 'queue-server-read': {
      const commands: Command[] = []
      const read = serverRead(queue, action, commands)
      return { state: withQueueState(state, change(read.queue, ...read.changes)), commands }
    }
    case 'queue-posted':
      return queuePosted(state, queue, action)
    case 'queue-called': {
      // Whatever the answer, the queue is read again: it shows what the server holds. A change
      // made is told to the other tabs through the store.
      const commands: Command[] = []
      let next = wantServerRead(queue, commands)
      if (!action.error) next = change(next, { op: 'server-changed' })
      const error = action.error && callProblem(action.error, action.conflict)
      return { state: { ...withQueueState(state, next), ...(error && { error }) }, commands }
    }
    case 'queue-server-changed':
      return step(state) // read in `settle`
    // Not of a message this tab shows `sending` (no UI offers it): made on what the person saw.
    case 'queue-edit':
    case 'queue-remove':
    case 'queue-reorder':
    case 'queue-send-now': {
      const held = serverItemAction(queue, action)
      if (held) {
        const commands: Command[] = held.call ? [{ type: 'queue-call', call: held.call }] : []
        return { state: withQueueState(state, change(held.queue, ...held.changes)), commands }
      }
      return localItemAction(state, queue, action)
    }
    case 'queue-resume':
      return {
        state: withQueueState(state, change(queue, { op: 'paused', paused: false })),
        commands: [],
      }
    case 'submit-requested': {
      const waiting = queue.view.items.some((item) => item.status !== 'undelivered')
      if (sessionStatus(state) === 'idle' && !waiting) return null
      const text = action.text ?? state.draft
      if (text.trim() === '') return null // the engine's own answer: the message is empty
      const item: StoredQueueItem = { id: action.messageId, text, status: 'queued' }
      const draft = state.draft === text ? '' : state.draft
      return {
        state: { ...withQueueState(state, change(queue, { op: 'add', item })), draft, error: null },
        commands: [
          {
            type: 'settle-submit',
            request: action.request,
            result: { outcome: 'queued', id: item.id },
          },
        ],
      }
    }
    default:
      return null
  }
}

/** The person's edit, removal, move or "send now" of a message this client holds. */
function localItemAction(
  state: EngineState,
  queue: QueueState,
  action: Extract<
    EngineAction,
    { type: 'queue-edit' | 'queue-remove' | 'queue-reorder' | 'queue-send-now' }
  >,
): Step {
  const seen = queue.view.items.find((item) => item.id === action.id)
  let edit: QueueChange
  if (action.type === 'queue-reorder') {
    // Behind what the server holds, which runs first: `to` counts the queue as shown.
    const local = queue.view.items.filter((item) => item.queueId === undefined)
    const ahead = shownQueue(queue).length - local.length
    const others = local.filter((item) => item.id !== action.id)
    const before = others[Math.max(0, Math.trunc(action.to) - ahead)]?.id ?? null
    edit = { op: 'move', id: action.id, before }
  } else if (action.type === 'queue-send-now') {
    // Sent again only if the person saw it undelivered (their decision, with its error shown).
    const retry = seen?.status === 'undelivered'
    edit = { op: 'front', id: action.id, ...(retry && { retry }) }
  } else {
    if (!seen || seen.status === 'sending') return step(state)
    edit =
      action.type === 'queue-edit'
        ? { op: 'edit', id: action.id, text: action.text }
        : { op: 'remove', id: action.id }
  }
  return { state: withQueueState(state, change(queue, edit)), commands: [] }
}

/**
 * A message handed to the server's queue was answered (`queue-post`): it is the server's now (or
 * was already, or runs); refused, it is undelivered; with no answer, it is sent once more with
 * the same id where the server dedupes, else undelivered ("may have been sent").
 */
function queuePosted(
  state: EngineState,
  queue: QueueState,
  action: Extract<EngineAction, { type: 'queue-posted' }>,
): Step {
  const sending = queue.sending
  if (sending?.via !== 'server-queue' || sending.token !== action.token) return step(state)
  const { answer } = action
  const commands: Command[] = []
  let next: QueueState = { ...queue, sending: null }
  switch (answer.kind) {
    case 'queued':
      next = change(
        next,
        { op: 'handed', id: sending.id, queueId: answer.queueId },
        { op: 'server-queue', serverQueue: true },
      )
      next = wantServerRead(
        { ...next, handedAt: { ...next.handedAt, [answer.queueId]: next.serverReads.asked } },
        commands,
      )
      break
    case 'duplicate':
    case 'started':
      // Taken (now, or by an earlier POST whose answer was lost): the reads show where it is.
      // (`settle` asks the engine for a read of the record.)
      next = change(next, { op: 'done', id: sending.id })
      if (answer.kind === 'duplicate') next = wantServerRead(next, commands)
      break
    case 'refused':
      next = change(next, {
        op: 'mark',
        id: sending.id,
        status: 'undelivered',
        error: { code: answer.error.code, message: answer.error.message },
      })
      break
    case 'lost': {
      const attempts = sending.attempts ?? 1
      if (queue.view.dedupes === true && attempts < 2) {
        next = { ...next, sending: { ...sending, attempts: attempts + 1 } }
        const item = queue.view.items.find((i) => i.id === sending.id)
        if (item) {
          commands.push({ type: 'queue-post', token: sending.token, id: item.id, text: item.text })
          break
        }
        next = { ...next, sending: null }
      }
      next = change(next, {
        op: 'mark',
        id: sending.id,
        status: 'undelivered',
        error: answerLost,
      })
    }
  }
  return { state: withQueueState(state, next), commands }
}

/**
 * What every step owes the queue once the engine (or the queue's own action) has stepped: the POST
 * of a message whose `sending` mark is written, that message's fate, the record's word on every
 * queued one, what a Stop or a failed turn does, the next message to send, and the write of what
 * changed.
 */
function settle(
  before: EngineState,
  stepped: Step,
  action: EngineAction,
  config: EngineConfig,
  base: Reducer,
): Step {
  let state = stepped.state
  let queue = state.queue
  if (!queue || state.disposed) return stepped
  const commands = [...stepped.commands]
  if ('at' in action) queue = { ...queue, clock: action.at }

  // The message marked `sending` goes out once that mark is committed to the store.
  const post = queue.sending
  if (post && !post.posted && action.type === 'queue-written') {
    const item = queue.view.items.find((i) => i.id === post.id)
    queue = { ...queue, sending: item ? { ...post, posted: true } : null }
    // While a turn runs, to the server's queue (where it has one and `keep` is the rule); when
    // the thread is free, as this tab's own turn.
    if (item && handsOver(queue) && sessionStatus(state) !== 'idle') {
      queue = { ...queue, sending: { ...post, posted: true, via: 'server-queue', attempts: 1 } }
      commands.push({ type: 'queue-post', token: post.token, id: item.id, text: item.text })
    } else if (item) {
      const sent = base(
        withQueueState(state, queue),
        {
          type: 'submit-requested',
          request: post.token,
          text: item.text,
          messageId: item.id,
          at: queue.clock,
        },
        config,
      )
      state = sent.state
      commands.push(...sent.commands)
    }
  }

  // Its fate, as the engine settled its `submit` (at once when the thread turned busy meanwhile).
  const { sending } = queue
  const settled = sending
    ? commands.find((c) => c.type === 'settle-submit' && c.request === sending.token)
    : undefined
  if (sending && settled?.type === 'settle-submit') {
    const { result } = settled
    queue = { ...queue, sending: null }
    // Taken into the server's own queue: it waits there until its turn.
    if (result.outcome === 'accepted' && result.queueId !== undefined)
      queue = {
        ...change(
          queue,
          { op: 'handed', id: sending.id, queueId: result.queueId },
          { op: 'server-queue', serverQueue: true },
        ),
        handedPosts: { ...queue.handedPosts, [sending.token]: sending.id },
      }
    else if (result.outcome === 'accepted') queue = change(queue, { op: 'done', id: sending.id })
    else if (result.outcome === 'failed' && result.error.code !== 'turn_already_running')
      queue = change(queue, {
        op: 'mark',
        id: sending.id,
        status: 'undelivered',
        // What the store keeps of it: JSON, read back by `parseStoredQueue`.
        error: { code: result.error.code, message: result.error.message },
      })
    // Busy, or refused as busy: it waits for a read to show what runs, then for the thread.
    else {
      queue = change(queue, { op: 'mark', id: sending.id, status: 'queued' })
      const read = waitForRead(state, queue, config, base)
      state = read.state
      queue = read.queue
      commands.push(...read.commands)
    }
  }

  // A message the server queued on this tab's own POST begins there: it leaves the queue as its
  // turn shows (else it would show in both); its stream gone first, the reads say where it is.
  if ('token' in action && action.token in queue.handedPosts) {
    const { [action.token]: id, ...rest } = queue.handedPosts
    const began =
      action.type === 'turn-events' && action.events.some((e) => e.type === 'execution-started')
    if (began && id !== undefined) queue = change(queue, { op: 'done', id })
    if (began || action.type === 'stream-ended' || action.type === 'post-failed')
      queue = { ...queue, handedPosts: rest }
  }

  // What this tab learnt of dedupe is shared with the tabs (a sender judges by it).
  if (state.dedupesMessages !== null && state.dedupesMessages !== queue.view.dedupes)
    queue = change(queue, { op: 'dedupes', dedupes: state.dedupesMessages })
  // And that the server queues messages itself (its header says so; the platform's says nothing,
  // but a `message-queued` does).
  const queues =
    (action.type === 'turn-opened' && action.queuesMessages) ||
    (action.type === 'turn-events' && action.events.some((e) => e.type === 'message-queued'))
  if (queues && queue.view.serverQueue !== true)
    queue = change(queue, { op: 'server-queue', serverQueue: true })

  // The server's queue is read when it may have changed: on its push, once this tab follows the
  // thread, when a read of the record shows a turn began or ended (the server takes up its next
  // item), after a message was handed over; and a message handed over that this tab had not
  // heard of is judged by a read asked from now.
  if (queue.view.serverQueue === true && state.active) {
    const learnt = learnHanded(queue)
    queue = learnt.queue
    const held = queue.server !== null && queue.server.items.length > 0
    const handed = queue.view.items.some((item) => item.queueId !== undefined)
    // Another tab changed the server's queue (told through the store).
    const heard =
      action.type === 'queue-stored' ||
      action.type === 'queue-locked' ||
      (action.type === 'queue-sender' && action.held)
    const told =
      heard && before.queue !== undefined && queue.stored.serverRev !== before.queue.view.serverRev
    if (
      learnt.learnt ||
      told ||
      action.type === 'queue-server-changed' ||
      action.type === 'activated' ||
      (action.type === 'queue-sender' && action.held) ||
      (queue.server === null && queue.serverReads.asked === 0) ||
      (action.type === 'snapshot' && action.fresh && action.fromRead && (held || handed))
    )
      queue = wantServerRead(queue, commands)
  }
  // A message the server took (or had taken): the record shows it.
  if (
    action.type === 'queue-posted' &&
    (action.answer.kind === 'duplicate' || action.answer.kind === 'started')
  ) {
    const read = base(withQueueState(state, queue), { type: 'read-wanted', urgent: false }, config)
    state = read.state
    commands.push(...read.commands)
  }

  if (action.type === 'snapshot' && action.fresh) {
    // The record holds a queued message: its turn was taken, whoever sent it.
    const ids = recordedIds(state)
    for (const item of queue.view.items)
      if (ids.has(item.id) && item.id !== queue.sending?.id)
        queue = change(queue, { op: 'done', id: item.id })
    // Messages another tab was sending, judged by a read started after this tab found them.
    if (
      action.fromRead &&
      queue.judgeAfterRead !== null &&
      state.reads.count > queue.judgeAfterRead
    ) {
      const again = queue.view.dedupes === true
      for (const item of queue.view.items)
        if (item.status === 'sending' && item.id !== queue.sending?.id)
          queue = change(
            queue,
            again
              ? { op: 'mark', id: item.id, status: 'queued' }
              : { op: 'mark', id: item.id, status: 'undelivered', error: mayHaveBeenSent },
          )
      queue = { ...queue, judgeAfterRead: null }
    }
  }

  // A Stop pressed here, or a turn that failed, does what `whenStopped` says. The sender also
  // pauses on a turn the record shows cancelled (a Stop pressed in another tab, whose pause may
  // not have reached it yet): it sends nothing before it knows how the last turn ended
  // (`readyToSend`), so the pause is never late. `draft` is the stopping tab's alone (the texts go
  // into one draft).
  const stopped = action.type === 'stop-requested' && before.stop === null && state.stop !== null
  const ended = (status: string) =>
    commands.some((c) => c.type === 'turn-ended' && c.ending.status === status)
  const failed = queue.sender && ended('error')
  const pause =
    queue.whenStopped === 'pause' && (stopped || failed || (queue.sender && ended('cancelled')))
  if (pause) queue = change(queue, { op: 'paused', paused: true })
  else if (queue.whenStopped === 'draft' && (stopped || failed)) {
    const back = queue.view.items.filter(waitsHere)
    queue = change(queue, ...back.map((item): QueueChange => ({ op: 'done', id: item.id })))
    const texts = [state.draft, ...back.map((item) => item.text)]
    state = { ...state, draft: texts.filter((text) => text.trim() !== '').join('\n\n') }
  }

  // A sender that finds messages another tab was sending waits for a read to judge them.
  const current = queue.sending?.id
  const orphans = queue.view.items.some((i) => i.status === 'sending' && i.id !== current)
  if (queue.sender && orphans && queue.judgeAfterRead === null) {
    const read = waitForRead(state, queue, config, base)
    state = read.state
    queue = read.queue
    commands.push(...read.commands)
  }

  // This tab's changes go to the store in a transaction; so is the choice of the next message to
  // send made there (`queue-locked`), from what the store holds then.
  const wantsToSend = readyToSend(state, queue) && queue.view.items.some(waitsHere)
  // (Not in the step that heard a write fail: the next one tries again, not a loop of failures.)
  if (
    (queue.pending.length > 0 || wantsToSend) &&
    !queue.locking &&
    action.type !== 'queue-store-failed'
  ) {
    commands.push({ type: 'queue-lock' })
    queue = { ...queue, locking: true }
  }
  return { state: withQueueState(state, queue), commands }
}

/**
 * This tab may send the next queued message now: it is the sender, and the thread is free; or,
 * where it hands messages to the server's queue, the message sent before it was accepted (this
 * tab's own, and another tab's that holds the gate), so that they reach the server in order.
 */
const readyToSend = (state: EngineState, queue: QueueState) =>
  queue.sender &&
  !queue.sending &&
  !queue.view.paused &&
  queue.judgeAfterRead === null &&
  // A message another tab was sending is judged first (`waitForRead`): its fate may be ahead.
  !queue.view.items.some((item) => item.status === 'sending') &&
  state.active &&
  (handsOver(queue)
    ? state.synced && state.own?.phase !== 'posting' && !heldByAnotherTab(state)
    : // Every turn this tab saw running has its ending on record (a cancelled one pauses the queue).
      state.watching.length === 0 && sessionStatus(state) === 'idle')

/**
 * Nothing more is sent until a read started from now answers (`judgeAfterRead`): asked through the
 * engine, so that its scheduler sets the alarm for it.
 */
function waitForRead(state: EngineState, queue: QueueState, config: EngineConfig, base: Reducer) {
  const waiting = { ...queue, judgeAfterRead: state.reads.count }
  const read = base(withQueueState(state, waiting), { type: 'read-wanted', urgent: false }, config)
  return { state: read.state, queue: waiting, commands: read.commands }
}

const answerLost = errorRecord(
  'network_error',
  'This message was sent, but the connection failed before the server answered, and this ' +
    'server cannot tell a second copy from a new message: it may have been taken. Check the ' +
    'conversation, then send it again (send now) or remove it.',
)

const mayHaveBeenSent = errorRecord(
  'network_error',
  'This message was being sent from a tab that closed or reloaded before the server answered, ' +
    'and this server cannot tell a second copy from a new message: it may have been sent. Check ' +
    'the conversation, then send it again (send now) or remove it.',
)
