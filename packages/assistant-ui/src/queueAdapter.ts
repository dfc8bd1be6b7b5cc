import type {
  AppendMessage,
  AssistantRuntime,
  ExternalThreadQueueAdapter,
  QueueItemState,
} from '@assistant-ui/react'
import type { PreviewChat, SubmitResult } from '@preview-chat/react'
import type { QueuedMessage } from '@preview-chat/react/queue'

type Placement = Parameters<ExternalThreadQueueAdapter['move']>[1]
/** A `submit()` that sent nothing and queued nothing. */
export type NotSent = Extract<SubmitResult, { outcome: 'failed' | 'busy' }>

const noItems: readonly QueueItemState[] = []

/** The text of a message the kit's composer sent: its text parts, a blank line between them. */
export const appendedText = (message: AppendMessage): string =>
  message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n\n')

/** The kit's queue items for the session's queue (`chat.queue`): one per message, in its order. */
export function toQueueItems(queue: readonly QueuedMessage[]): readonly QueueItemState[] {
  return queue.map(({ id, text }) => ({ id, prompt: text, parts: [{ type: 'text', text }] }))
}

/** The queue's two lanes: what the server adds to the running turn (`steering`), and the rest. */
const lanes = (queue: readonly QueuedMessage[]) => ({
  waiting: queue.filter((item) => item.status !== 'steering'),
  steering: queue.filter((item) => item.status === 'steering'),
})

/**
 * Where `placement` puts `id` in `queue`, as assistant-ui's own queue reads it (`insertAfter: null`
 * is the front, `insertBefore: null` the end); `null` when it says nothing, or names a message
 * that is not there (another tab removed it meanwhile).
 */
function placedAt(queue: readonly QueuedMessage[], id: string, placement: Placement) {
  const others = queue.filter((item) => item.id !== id)
  const at = (anchor: string) => {
    const index = others.findIndex((item) => item.id === anchor)
    return index < 0 ? null : index
  }
  const { insertAfter, insertBefore } = placement
  if (insertAfter === null) return 0
  if (insertAfter !== undefined) {
    const index = at(insertAfter)
    return index === null ? null : index + 1
  }
  if (insertBefore === null) return others.length
  return insertBefore === undefined ? null : at(insertBefore)
}

/**
 * assistant-ui's queue adapter (`ExternalStoreAdapter.queue`) over the session's queue, for a
 * client made with `queue()`. The session's queue has one lane, kept in storage for every tab:
 *
 * - the kit's `enqueue` and `steer` (its Send while a turn runs) are `submit(text)`: sent now
 *   when the thread is free, queued behind the others when not. Nothing interrupts a running turn
 *   (Stop does that).
 * - `move` into the steer lane ("run now") is `sendQueuedNow(id)`: to the front, the queue
 *   resumed; on a server with a queue of its own, an item it holds joins the running turn, and
 *   shows in `steerItems` (`status: 'steering'`) until it does. A move within the queue is
 *   `reorderQueued(id, index)`.
 * - `edit` and `remove` are `editQueued` and `removeQueued` (nothing happens to a message being
 *   sent).
 *
 * The kit awaits none of these, so a message the session did not take (`failed`; `busy`) goes to
 * `refused`, which hands its text back to the composer.
 */
export function queueAdapter(
  items: readonly QueueItemState[],
  steerItems: readonly QueueItemState[],
  current: () => PreviewChat,
  refused: (text: string, result: NotSent) => void,
): ExternalThreadQueueAdapter {
  const send = (message: AppendMessage) => {
    const text = appendedText(message)
    void current()
      .submit(text)
      .then((result) => {
        if (result.outcome === 'failed' || result.outcome === 'busy') refused(text, result)
      })
  }
  return {
    items,
    steerItems: steerItems.length === 0 ? noItems : steerItems,
    enqueue: send,
    steer: send,
    move: (id, placement) => {
      const chat = current()
      if (placement.lane === 'steer') return chat.sendQueuedNow?.(id)
      const index = placedAt(chat.queue ?? [], id, placement)
      if (index !== null) chat.reorderQueued?.(id, index)
    },
    edit: (id, message) => current().editQueued?.(id, appendedText(message)),
    remove: (id) => current().removeQueued?.(id),
  }
}

/**
 * What `usePreviewChatRuntime({ queue: previewChatQueue })` takes to give assistant-ui the
 * session's queue (`@preview-chat/assistant-ui/queue`): its own import, so that an app without a
 * queue carries none of it.
 */
export function previewChatQueue(
  queued: readonly QueuedMessage[],
  current: () => PreviewChat,
  runtime: () => AssistantRuntime | undefined,
): ExternalThreadQueueAdapter {
  // A message the session refused goes back to the composer, if it is still empty.
  const { waiting, steering } = lanes(queued)
  return queueAdapter(toQueueItems(waiting), toQueueItems(steering), current, (text) => {
    const composer = runtime()?.thread.composer
    if (composer?.getState().text === '') composer.setText(text)
  })
}

/** The type of `previewChatQueue`: the runtime's `queue` option. */
export type PreviewChatQueue = typeof previewChatQueue
