/**
 * The server's own queue (the platform's next era, `next-era.md`), as the client's queue uses it
 * ([decision](../../../../../docs/decisions/client-queue.md), "The server's queue"). Pure, like
 * the queue's reducer (`reduce.ts`), which calls these:
 * - the UI sees one queue: the server's items (read from `GET …/queue`, on its push, after each
 *   change), then the messages this client still holds;
 * - where the server queues and `whenStopped` is `keep` (the server's own rule: a Stop or a
 *   failure leaves its queue in place), the sender hands each message over as soon as it is
 *   written (`queue-post`): this client's queue covers only the time before `message-queued`.
 *   With `pause` or `draft`, it holds its messages until the thread is free, since a message the
 *   server has taken cannot be held back from a Stop without racing the server's next take-up;
 * - an item the server holds is edited, removed, reordered and steered through the server's
 *   routes; a 409 says why it could not be, and the queue is read again.
 */
import { byId, withId } from '../../wire/contract/ids'
import { errorRecord, type ErrorRecord } from '../../wire/contract/errors'
import { explain } from '../../wire/contract/explain'
import type { Command, EngineAction } from '../model'
import type { QueueChange, QueueState, ServerQueueCall, StoredQueueItem } from './model'

/** A message of the queue as the UI shows it (`SessionState.queue`, before its errors are made public). */
export interface ShownQueueItem {
  id: string
  text: string
  status: 'queued' | 'sending' | 'undelivered' | 'steering'
  error?: ErrorRecord
  /** Its item in the server's own queue. */
  queueId?: string
  /** A pause holds it (`StoredQueueItem.held`). */
  held?: true
}

/**
 * The sender hands messages to the server's queue as they come: where it has one and `keep` is the
 * rule (see the file's comment).
 */
export const handsOver = (queue: QueueState) =>
  queue.view.serverQueue === true && queue.whenStopped === 'keep'

/** Waits in this client, to be sent by it (not handed to the server's queue). */
export const waitsHere = (item: StoredQueueItem) =>
  item.status === 'queued' && item.queueId === undefined

/** The id the UI gives an item of the server's queue that no tab of this scope handed over. */
export const serverItemId = (queueId: string) => `queue:${queueId}`

/**
 * The one queue the UI shows: the server's items in its order (under the id of the message this
 * scope handed over, where it did), then what this client holds (a message handed over that no
 * read lists yet shows `queued` in its place).
 */
export function shownQueue(queue: QueueState): ShownQueueItem[] {
  const handed = new Map<string, StoredQueueItem>()
  for (const item of queue.view.items)
    if (item.queueId !== undefined) handed.set(item.queueId, item)
  // A message on its way may be in the server's queue before its POST's answer names its item
  // (the push and a read can beat it; the server's items carry no `messageId`): an item no tab
  // knows, with the text of one on its way, is that one, shown once, as it is on its way.
  const onItsWay = queue.view.items
    .filter((item) => item.status === 'sending' && item.queueId === undefined)
    .map((item) => item.text)
  const listed = new Set<string>()
  const shown: ShownQueueItem[] = []
  for (const item of queue.server?.items ?? []) {
    listed.add(item.queueId)
    const mine = onItsWay.indexOf(item.text)
    if (!handed.has(item.queueId) && mine >= 0) {
      onItsWay.splice(mine, 1)
      continue
    }
    shown.push({
      id: handed.get(item.queueId)?.id ?? serverItemId(item.queueId),
      text: item.text,
      status: item.steering ? 'steering' : 'queued',
      queueId: item.queueId,
    })
  }
  for (const item of queue.view.items) {
    if (item.queueId !== undefined) {
      if (!listed.has(item.queueId))
        shown.push({ id: item.id, text: item.text, status: 'queued', queueId: item.queueId })
    } else
      shown.push({
        id: item.id,
        text: item.text,
        status: item.status,
        ...(item.error && { error: item.error }),
        ...(item.held && { held: true }),
      })
  }
  return shown
}

/** A read of the server's queue: asked now, or once the one in flight answers. */
export function wantServerRead(queue: QueueState, commands: Command[]): QueueState {
  const reads = queue.serverReads
  if (reads.inFlight) return { ...queue, serverReads: { ...reads, wanted: true } }
  const seq = reads.asked + 1
  commands.push({ type: 'queue-read-server', seq })
  return { ...queue, serverReads: { ...reads, asked: seq, inFlight: true, wanted: false } }
}

/**
 * A read of the server's queue answered. An answer older than the one shown changes nothing (a
 * read that answers late); a message handed over that a read asked after this tab learnt of it
 * does not list was taken up or removed: it leaves this queue (the record shows which).
 */
export function serverRead(
  queue: QueueState,
  action: Extract<EngineAction, { type: 'queue-server-read' }>,
  commands: Command[],
): { queue: QueueState; changes: QueueChange[] } {
  const reads = { ...queue.serverReads, inFlight: false }
  let next: QueueState = { ...queue, serverReads: reads }
  const changes: QueueChange[] = []
  if ('error' in action) {
    commands.push({
      type: 'warn',
      message: `The server's message queue could not be read (${action.error.message}); it shows as last read, and is read again on its next change.${explain('server-queue-unread')}`,
    })
  } else if (action.seq > reads.applied) {
    const listed = new Set(action.server.items.map((item) => item.queueId))
    const gone = (queueId: string | undefined) =>
      queueId !== undefined &&
      !listed.has(queueId) &&
      (byId(queue.handedAt, queueId) ?? Infinity) < action.seq
    for (const item of queue.view.items)
      if (gone(item.queueId)) changes.push({ op: 'done', id: item.id })
    const handedAt = Object.fromEntries(
      Object.entries(queue.handedAt).filter(([queueId]) => !gone(queueId)),
    )
    next = {
      ...next,
      server: action.server,
      serverReads: { ...reads, applied: action.seq },
      handedAt,
    }
  }
  return { queue: reads.wanted ? wantServerRead(next, commands) : next, changes }
}

/** Items handed over that this tab had not heard of: from now, a read asked later judges them. */
export function learnHanded(queue: QueueState): { queue: QueueState; learnt: boolean } {
  let handedAt: Record<string, number> | null = null
  for (const { queueId } of queue.view.items) {
    if (queueId === undefined || Object.hasOwn(queue.handedAt, queueId)) continue
    handedAt = withId(handedAt ?? queue.handedAt, queueId, queue.serverReads.asked)
  }
  return handedAt ? { queue: { ...queue, handedAt }, learnt: true } : { queue, learnt: false }
}

/**
 * The person's edit, removal, move or "send now" of an item the server holds, as the call to make
 * and the view meanwhile (the next read corrects it); `null` when `id` is not such an item.
 */
export function serverItemAction(
  queue: QueueState,
  action: Extract<
    EngineAction,
    { type: 'queue-edit' | 'queue-remove' | 'queue-reorder' | 'queue-send-now' }
  >,
): { queue: QueueState; call: ServerQueueCall | null; changes: QueueChange[] } | null {
  const shown = shownQueue(queue)
  const item = shown.find((i) => i.id === action.id)
  const queueId = item?.queueId
  if (queueId === undefined) return null
  const server = queue.server ?? { steerable: null, items: [] }
  const pending = server.items.filter((i) => !i.steering).map((i) => i.queueId)
  const handedHere = queue.view.items.find((i) => i.queueId === queueId)
  const withItems = (items: typeof server.items): QueueState => ({
    ...queue,
    server: { ...server, items },
  })
  switch (action.type) {
    case 'queue-edit':
      return {
        queue: withItems(
          server.items.map((i) => (i.queueId === queueId ? { ...i, text: action.text } : i)),
        ),
        call: { op: 'edit', queueId, text: action.text },
        changes: handedHere ? [{ op: 'edit', id: handedHere.id, text: action.text }] : [],
      }
    case 'queue-remove':
      return {
        queue: withItems(server.items.filter((i) => i.queueId !== queueId)),
        call: { op: 'remove', queueId },
        changes: handedHere ? [{ op: 'done', id: handedHere.id }] : [],
      }
    case 'queue-reorder': {
      const steering = server.items.length - pending.length
      const at = Math.min(Math.max(0, Math.trunc(action.to) - steering), pending.length - 1)
      return reorder(queue, withItems, pending, queueId, pending[at])
    }
    case 'queue-send-now': {
      if (item?.status === 'steering') return { queue, call: null, changes: [] }
      if (server.steerable !== null && pending.includes(queueId)) {
        const moved = server.items.find((i) => i.queueId === queueId)
        const rest = server.items.filter((i) => i.queueId !== queueId)
        return {
          queue: withItems(moved ? [{ ...moved, steering: true }, ...rest] : server.items),
          call: { op: 'steer', queueId, executionId: server.steerable },
          changes: [],
        }
      }
      return reorder(queue, withItems, pending, queueId, pending[0])
    }
  }
}

function reorder(
  queue: QueueState,
  withItems: (items: NonNullable<QueueState['server']>['items']) => QueueState,
  pending: string[],
  queueId: string,
  target: string | undefined,
): { queue: QueueState; call: ServerQueueCall | null; changes: QueueChange[] } {
  const items = queue.server?.items ?? []
  if (target === undefined || target === queueId || !pending.includes(queueId))
    return { queue, call: null, changes: [] }
  // The moved item takes the target's place, the others shift (the server's own rule).
  const order = pending.filter((id) => id !== queueId)
  order.splice(pending.indexOf(target), 0, queueId)
  const byId = new Map(items.map((i) => [i.queueId, i]))
  const steering = items.filter((i) => i.steering)
  return {
    queue: withItems([...steering, ...order.flatMap((id) => byId.get(id) ?? [])]),
    call: { op: 'reorder', queueId, targetQueueId: target, expectedQueueIds: pending },
    changes: [],
  }
}

const changedMeanwhile =
  'The queue changed meanwhile (another tab or device): it now shows its current order; try again if you still want it.'

const conflictMessages: Record<string, string> = {
  queue_item_started:
    'That message had already been taken up, so it was not changed: it is in the conversation now.',
  queue_item_steering:
    'That message is being added to the running turn, so it can no longer be changed.',
  queue_changed: changedMeanwhile,
  not_steerable: 'The running turn cannot take a message now: it stays queued, and runs next.',
}

/**
 * What the person is told when the server could not make a change of its queue: a 409 says why
 * (`conflict`), a 404 that the item is gone; any other error as it came.
 */
export function callProblem(error: ErrorRecord, conflict: string | null): ErrorRecord {
  const gone = error.status === 404
  if (conflict === null && !gone) return error
  const message = gone
    ? 'That message is no longer in the queue (removed in another tab or device, or taken up): nothing was changed.'
    : (conflictMessages[conflict ?? ''] ?? changedMeanwhile)
  return errorRecord(gone ? 'not_found' : 'conflict', message + explain('queue-change-refused'), {
    ...(error.status !== undefined && { status: error.status }),
    ...(error.serverCode !== undefined && { serverCode: error.serverCode }),
  })
}
