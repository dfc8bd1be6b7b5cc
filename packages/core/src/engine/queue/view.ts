/**
 * What a session with a queue shows: the queue as one list (the server's items, then this
 * client's), whether it is paused and kept across reloads, and the gate with a queue — a message
 * can always be sent, since it waits in the queue while the thread is busy.
 */
import { fromErrorRecord } from '../../wire/contract/errors'
import { draftOnItsWay } from '../draft'
import type { EngineState } from '../model'
import type { QueueState } from './model'
import type { QueuedMessage, SessionState } from '../select'
import { shownQueue, type ShownQueueItem } from './server'
import { isPaused } from './stored'

/** The queue's fields of the view, for `state.queue` (`null` while the session has no queue). */
export interface QueueFields {
  queue: readonly QueuedMessage[]
  queuePaused: boolean
  queueKept: boolean
}

/** The queue's fields, keeping `previous.queue` (the same array) while its items are the same. */
export function queueFields(
  queue: QueueState | undefined,
  previous: readonly QueuedMessage[] | undefined,
): QueueFields {
  const items = queue ? shownQueue(queue) : []
  const same =
    previous?.length === items.length && items.every((item, i) => sameItem(previous[i], item))
  return {
    queue: same && previous ? previous : items.map(toQueuedMessage),
    // Paused while a message waits held by a pause: `resumeQueue()` has something to send.
    queuePaused: queue !== undefined && isPaused(queue.view),
    // Until the store answers it is not known to be lost: said once it is known (`queue-attached`);
    // while the store refuses this tab's writes, what it holds is in this tab's memory only.
    queueKept: queue === undefined || !queue.attached || (queue.kept && queue.unwritten === null),
  }
}

/**
 * The gate with a queue: any non-empty draft can be sent (it waits while the thread is busy),
 * except the draft that is on its way already.
 */
export const queueGate = (view: SessionState, state: EngineState) => ({
  canSend: true,
  canSubmit: view.draft.trim() !== '' && !draftOnItsWay(state),
})

const sameItem = (a: QueuedMessage | undefined, b: ShownQueueItem) =>
  a !== undefined &&
  a.id === b.id &&
  a.text === b.text &&
  a.status === b.status &&
  a.queueId === b.queueId &&
  a.held === b.held &&
  a.error?.message === b.error?.message

function toQueuedMessage(item: ShownQueueItem): QueuedMessage {
  return {
    id: item.id,
    text: item.text,
    status: item.status,
    ...(item.error && { error: fromErrorRecord(item.error) }),
    ...(item.queueId !== undefined && { queueId: item.queueId }),
    ...(item.held && { held: true }),
  }
}
