/**
 * The queue's change algebra: each change a tab makes (add, edit, move, mark …) as data, applied
 * to what the store holds inside its transaction, so that no tab's change is lost to another's.
 */
import type { QueueChange, QueueState, StoredQueue, StoredQueueItem } from './model'
import { waitsHere } from './server'

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
      // "Send now" resumes the queue: nothing is held any more.
      return { ...queue, items: [front, ...without].map(unheld) }
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
    case 'hold': {
      // What still waits of what the pause covers: one sent or handed over since is on its way.
      const held = (i: StoredQueueItem) => !i.held && waitsHere(i) && change.ids.includes(i.id)
      return items.some(held)
        ? { ...queue, items: items.map((i) => (held(i) ? { ...i, held: true } : i)) }
        : queue
    }
    case 'resume':
      return items.some((i) => i.held) ? { ...queue, items: items.map(unheld) } : queue
    case 'dedupes':
      return queue.dedupes === change.dedupes ? queue : { ...queue, dedupes: change.dedupes }
    case 'server-queue':
      return queue.serverQueue === change.serverQueue
        ? queue
        : { ...queue, serverQueue: change.serverQueue }
    case 'stopped': {
      const stopped = queue.stopped ?? []
      return stopped.includes(change.executionId)
        ? queue
        : { ...queue, stopped: [...stopped, change.executionId].slice(-STOPS_KEPT) }
    }
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

/** The item, no longer held by a pause. */
function unheld(item: StoredQueueItem): StoredQueueItem {
  if (!item.held) return item
  const { held: _, ...rest } = item
  return rest
}

/** How many Stops the store remembers (`StoredQueue.stopped`): a turn's ending comes soon after. */
const STOPS_KEPT = 8

export const applyAll = (queue: StoredQueue, changes: readonly QueueChange[]) =>
  changes.reduce(applyQueueChange, queue)

/**
 * The person's edits and removals that `queue` refuses: of a message on its way already (`sending`,
 * marked by another tab before this one heard of it). `applyQueueChange` leaves them out; the tab
 * that made them says so.
 */
export const refusedChanges = (queue: StoredQueue, changes: readonly QueueChange[]) =>
  changes.filter(
    (c) =>
      (c.op === 'edit' || c.op === 'remove') &&
      queue.items.some((item) => item.id === c.id && item.status === 'sending'),
  )

/** This tab's change: shown at once, written in the next transaction of the store. */
export function change(queue: QueueState, ...changes: QueueChange[]): QueueState {
  const pending = [...queue.pending, ...changes]
  return { ...queue, pending, view: applyAll(queue.view, changes) }
}
