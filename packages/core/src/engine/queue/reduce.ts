/**
 * The message queue ([decision](../../../../../docs/decisions/client-queue.md)): the queue's part
 * of the reducer (`withQueue`, the wrapper of its `EnginePart`, `queuePart`), pure like the engine's, that only
 * `@preview-chat/core/queue` imports, so that a client without a queue carries none of it. It
 * wraps the engine's decisions (`decide`); the runner ends every step with the engine's one
 * post-step, so a change it makes to the draft is stored as any other.
 *
 * Its files, one decision each: `stored.ts` (the stored format), `changes.ts` (the change
 * algebra), `send.ts` (who sends what, when), `stopped.ts` (`whenStopped`), `handOver.ts` and
 * `server.ts` (the server's own queue), `view.ts` (what the session shows). This file routes:
 * - `submit()` while the thread is busy, or behind messages still queued, adds the message to the
 *   queue (never to the transcript: it shows there once its turn begins) and clears the draft;
 * - the queue is one per thread, kept in a store shared by every tab of the scope (IndexedDB, or
 *   this document's memory where the browser refuses it): each change is applied to what the
 *   store holds inside one of its read-write transactions (`queue-lock`, then `queue-locked`), so
 *   that no tab's change is lost to another's write;
 * - the host opens, follows and closes the queue as the commands say (`queue-open`,
 *   `queue-follow`, `queue-unfollow`, `queue-close`), and answers with raw data.
 */
import { errorRecord } from '../../wire/contract/errors'
import { explain } from '../../wire/contract/explain'
import { isThread } from '../../wire/contract/ids'
import { sessionStatus } from '../derive'
import type { Command, EngineAction, EnginePart, EngineState, Reducer, Step } from '../model'
import { queueOf, type QueuedState } from './state'
import type { QueueChange, QueueState, StoredQueueItem } from './model'
import { reported, settled, step } from '../slices/common'
import { applyAll, applyQueueChange, change, refusedChanges } from './changes'
import { queuePosted } from './handOver'
import {
  callProblem,
  learnHanded,
  serverItemAction,
  serverRead,
  shownQueue,
  waitsHere,
  wantServerRead,
} from './server'
import {
  judgeOrphans,
  nextToSend,
  postCommitted,
  readyToSend,
  readWanted,
  sendable,
  submitSettled,
  waitForRead,
} from './send'
import { emptyQueue, readStored } from './stored'
import { afterStop } from './stopped'
import { draftOnItsWay, sendsAs } from '../draft'

/** The queue of a session whose store has not answered yet: changes made meanwhile wait. */
function unattached(at: number): QueueState {
  return {
    stored: emptyQueue,
    pending: [],
    view: emptyQueue,
    attached: false,
    kept: false,
    recordRead: false,
    locking: false,
    writing: null,
    unwritten: null,
    sender: false,
    whenStopped: 'pause',
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

const withQueueState = (state: EngineState, queue: QueueState): QueuedState => ({
  ...state,
  queue,
})

const recordedIds = (state: EngineState): Set<string> => {
  const ids = new Set<string>()
  for (const message of state.recorded?.messages ?? [])
    if (message.messageId !== undefined) ids.add(message.messageId)
  return ids
}

/** The session's lifecycle, as the queue's host is told to follow it. */
const lifecycleCommands: Partial<Record<EngineAction['type'], Command>> = {
  mounted: { type: 'queue-open' },
  activated: { type: 'queue-follow' },
  deactivated: { type: 'queue-unfollow' },
}

/** The queue's part of the reducer (see the file's comment). */
export const withQueue = (base: Reducer): Reducer => {
  return (state, action, config) => {
    if (state.disposed) return base(state, action, config)
    const queue = queueOf(state) ?? unattached('at' in action ? action.at : 0)
    // Leaving with changes not written: written now, without the lock (the page will not wait).
    if (action.type === 'disposed' || action.type === 'queue-leaving') {
      const left = action.type === 'disposed' ? base(state, action, config) : step(state)
      const commands = [...left.commands]
      if (queue.pending.length > 0) commands.push({ type: 'queue-flush', changes: queue.pending })
      if (action.type === 'disposed') commands.push({ type: 'queue-close' })
      return { ...left, commands }
    }
    const own = queueAction(withQueueState(state, queue), queue, action)
    const stepped = own ?? base(withQueueState(state, queue), action, config)
    const lifecycle = lifecycleCommands[action.type]
    const settled = settle(state, stepped, action)
    return lifecycle ? { ...settled, commands: [...settled.commands, lifecycle] } : settled
  }
}

/** The queue's own actions, and `submit()` when the message must wait: `null` for the engine's. */
function queueAction(state: EngineState, queue: QueueState, action: EngineAction): Step | null {
  switch (action.type) {
    case 'queue-attached': {
      const commands: Command[] = []
      const stored = readStored(action.stored, commands)
      const next: QueueState = {
        ...queue,
        stored,
        view: applyAll(stored, queue.pending),
        attached: true,
        kept: action.kept,
        whenStopped: action.whenStopped,
        clock: action.at,
      }
      return { state: withQueueState(state, next), commands }
    }
    case 'queue-store-refused':
      // This document's memory instead, said once: the queue works, but not across a reload.
      return queue.attached
        ? step(state)
        : step(
            state,
            { type: 'queue-fallback' },
            {
              type: 'warn',
              message: `The message queue is kept in this page only, lost on a reload: ${action.error.message}${explain('queue-in-memory')}`,
            },
          )
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
      // A change of a message another tab has marked `sending` since this one last heard: refused,
      // and said (the list shows it on its way, as the store does).
      const refused = refusedChanges(before, queue.pending)
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
      const head = nextToSend(state, next)
      if (head) {
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
      const error = refused.length > 0 && onItsWay(refused[0]?.op === 'edit')
      return { state: { ...withQueueState(state, next), ...(error && { error }) }, commands }
    }
    case 'queue-written':
      return {
        state: withQueueState(state, { ...queue, writing: null, unwritten: null }),
        commands: [],
      }
    case 'queue-store-failed': {
      // Nothing was written: its changes wait again, before those made since, and are written
      // again on a schedule (`unwritten`). The queue works on from this tab's memory meanwhile: a
      // message it marked `sending` in that write is sent all the same (`settle`), its mark kept
      // among the changes to write.
      const { writing, sending } = queue
      const marked: QueueChange[] =
        sending && !sending.posted
          ? [{ op: 'mark', id: sending.id, status: 'sending', by: state.tab }]
          : []
      const pending = [...(writing?.changes ?? []), ...marked, ...queue.pending]
      const stored = writing?.before ?? queue.stored
      const attempts = (queue.unwritten?.attempts ?? 0) + 1
      const next: QueueState = {
        ...queue,
        stored,
        pending,
        view: applyAll(stored, pending),
        locking: false,
        writing: null,
        unwritten: { attempts, retryAt: queue.clock + writeRetryDelay(attempts) },
      }
      // Said once, when the writes begin to fail (the state says so while they do: `queueKept`).
      return queue.unwritten
        ? step(withQueueState(state, next))
        : step(withQueueState(state, next), {
            type: 'warn',
            message: `The message queue could not be written (${action.error.message}); it works from this tab's memory, and its changes are written once the store takes them.${explain('queue-unwritten')}`,
          })
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
      // The server pushes changes of its queue: it has one (learnt from the server itself, not
      // from a POST of this tab's). Read in `settle`.
      return isThread(state.key, action.thread) && queue.view.serverQueue !== true
        ? step(withQueueState(state, change(queue, { op: 'server-queue', serverQueue: true })))
        : step(state)
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
        state: withQueueState(state, change(queue, { op: 'resume' })),
        commands: [],
      }
    case 'submit-requested': {
      // The queue's own send (a negative token): the engine's, as any turn.
      if (action.request < 0) return null
      const waiting = queue.view.items.some((item) => item.status !== 'undelivered')
      if (sessionStatus(state) === 'idle' && !waiting) return null
      const text = action.text ?? state.draft
      if (text.trim() === '') return null // the engine's own answer: the message is empty
      // The draft on its way already (Send pressed twice): the engine's own answer, `busy`;
      // queued, it would be sent twice [R-QUEUE-DRAFT-ON-ITS-WAY].
      if (text === state.draft && draftOnItsWay(state)) return null
      // A draft whose fate is not known (its POST failed unanswered, its page left) is the same
      // message sent again: under the same id, which the record can show [R-DRAFT-SENT-ID].
      const id = sendsAs(state, text, action.messageId)
      const item: StoredQueueItem = { id, text, status: 'queued' }
      // Taken: the message waits in the queue now (a draft it was clears: `draftFate`).
      const added = { ...withQueueState(state, change(queue, { op: 'add', item })), error: null }
      return settled(
        action.request,
        { outcome: 'queued', id: item.id },
        reported(step(added), {
          type: 'message',
          fate: 'taken',
          token: action.request,
          text,
          messageId: item.id,
        }),
      )
    }
    default:
      return null
  }
}

/** How long a refused write waits before it is tried again: 1 s, doubling, 30 s at most. */
const writeRetryDelay = (attempts: number) => Math.min(30_000, 1_000 * 2 ** (attempts - 1))

/**
 * The queue's part of the engine (`queue()` brings it): its wrapper (`withQueue`), and its own due
 * time: a refused write is tried again at its time
 * (`QueueState.unwritten`), whether or not the thread takes another step.
 */
export const queuePart: EnginePart = {
  wrap: withQueue,
  dueAt: (state) => {
    const queue = queueOf(state)
    return queue && !queue.locking && queue.pending.length > 0
      ? (queue.unwritten?.retryAt ?? null)
      : null
  },
}

/** A change of a message already on its way, refused: it is sent as it was. */
const onItsWay = (edited: boolean) =>
  errorRecord(
    'conflict',
    `That message was already being sent (from another tab) when you ${edited ? 'edited' : 'removed'} it: it is sent as it was.${explain('on-its-way')}`,
  )

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
    if (!seen) return step(state)
    if (seen.status === 'sending')
      return step({ ...state, error: onItsWay(action.type === 'queue-edit') })
    edit =
      action.type === 'queue-edit'
        ? { op: 'edit', id: action.id, text: action.text }
        : { op: 'remove', id: action.id }
  }
  return { state: withQueueState(state, change(queue, edit)), commands: [] }
}

/**
 * What every step owes the queue once the engine (or the queue's own action) has stepped: the POST
 * of a message whose `sending` mark is written, that message's fate, the record's word on every
 * queued one, what a Stop or a failed turn does, the next message to send, and the write of what
 * changed. What it asks of the engine (a send, a read) is an `act`: a step of its own.
 */
function settle(before: EngineState, stepped: Step, action: EngineAction): Step {
  let state = stepped.state
  let queue = queueOf(state)
  if (!queue || state.disposed) return stepped
  const commands = [...stepped.commands]
  // What happened in this step, as the engine reported it (never read from its commands).
  const events = stepped.events ?? []
  if ('at' in action) queue = { ...queue, clock: action.at }
  if (events.some((e) => e.type === 'read-answered')) queue = { ...queue, recordRead: true }

  // Committed, or refused (then sent from this tab's memory): a message marked `sending` goes.
  if (action.type === 'queue-written' || action.type === 'queue-store-failed')
    queue = postCommitted(state, queue, commands)
  queue = submitSettled(state, queue, events, commands)

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
  // And that the server queues messages itself, as the server says: its capabilities header on
  // any answer, or a `message-queued` (the released platform sends no header).
  const queues =
    ((action.type === 'turn-opened' || action.type === 'capabilities-heard') &&
      action.capabilities.includes('message-queue')) ||
    (action.type === 'turn-events' && action.events.some((e) => e.type === 'message-queued'))
  if (queues && queue.view.serverQueue !== true)
    queue = change(queue, { op: 'server-queue', serverQueue: true })

  queue = serverReadsWanted(before, state, queue, action, commands)

  // The record holds a queued message: its turn was taken, whoever sent it — checked when a read
  // answers, and when the queue gains items (a draft sent again under its id, another tab's write
  // heard after the read that holds it: found by the queue model).
  const fresh = action.type === 'snapshot' && action.fresh
  if (fresh || queue.view.items !== queueOf(before)?.view.items) {
    const ids = recordedIds(state)
    for (const item of queue.view.items)
      if (ids.has(item.id) && item.id !== queue.sending?.id)
        queue = change(queue, { op: 'done', id: item.id })
  }
  if (fresh) queue = judgeOrphans(state, queue, action)

  ;({ state, queue } = afterStop(state, queue, events, queueOf(before)?.view.items ?? []))

  // A sender that finds messages another tab was sending waits for a read to judge them; one that
  // has messages to send and has not read the record yet asks for that read (the thread may be
  // busy: a reload mid-turn, a new thread's `isNew` left in the URL).
  const current = queue.sending?.id
  const orphans = queue.view.items.some((i) => i.status === 'sending' && i.id !== current)
  if (queue.attached && queue.sender && orphans && queue.judgeAfterRead === null)
    queue = waitForRead(state, queue, commands)
  const unread = state.reads.count === 0 && !state.reads.wanted && !state.reads.inFlight
  if (
    queue.sender &&
    state.active &&
    !queue.recordRead &&
    unread &&
    queue.view.items.some(waitsHere)
  )
    commands.push(readWanted)

  // This tab's changes go to the store in a transaction; so is the choice of the next message to
  // send made there (`queue-locked`), from what the store holds then. (Not in the step that heard
  // a write fail: the next one tries again, not a loop of failures.)
  // While the store refuses writes, changes wait for their retry's time (`queuePart`), not for
  // every step; a message to send is chosen under the lock all the same.
  const wantsToSend = readyToSend(state, queue) && queue.view.items.some(sendable)
  const retryDue =
    queue.unwritten === null || (action.type === 'tick' && action.at >= queue.unwritten.retryAt)
  if (
    queue.attached &&
    ((queue.pending.length > 0 && retryDue) || wantsToSend) &&
    !queue.locking &&
    action.type !== 'queue-store-failed'
  ) {
    commands.push({ type: 'queue-lock' })
    queue = { ...queue, locking: true }
  }
  return { ...stepped, state: withQueueState(state, queue), commands }
}

/**
 * The server's queue is read when it may have changed: on its push, once this tab follows the
 * thread, when a read of the record shows a turn began or ended (the server takes up its next
 * item), after a message was handed over; and a message handed over that this tab had not heard
 * of is judged by a read asked from now.
 */
function serverReadsWanted(
  before: EngineState,
  state: EngineState,
  queue: QueueState,
  action: EngineAction,
  commands: Command[],
): QueueState {
  if (queue.view.serverQueue !== true || !state.active) return queue
  const learnt = learnHanded(queue)
  const next = learnt.queue
  const held = next.server !== null && next.server.items.length > 0
  const handed = next.view.items.some((item) => item.queueId !== undefined)
  // Another tab changed the server's queue (told through the store).
  // (A sender's first read is wanted anyway, below.)
  const heard = action.type === 'queue-stored' || action.type === 'queue-locked'
  const earlier = queueOf(before)
  const told = heard && earlier !== undefined && next.stored.serverRev !== earlier.view.serverRev
  const wanted =
    learnt.learnt ||
    told ||
    (action.type === 'queue-server-changed' && isThread(state.key, action.thread)) ||
    action.type === 'activated' ||
    (action.type === 'queue-sender' && action.held) ||
    (next.server === null && next.serverReads.asked === 0) ||
    (action.type === 'snapshot' && action.fresh && action.fromRead && (held || handed))
  return wanted ? wantServerRead(next, commands) : next
}
