/**
 * `@preview-chat/react/queue`: `queue` of `@preview-chat/core/queue`, for an app that depends on
 * this package only. Its own entry: an app without a queue does not bundle it. With it,
 * `usePreviewChat` returns the queue (`chat.queue`, `chat.queuePaused`) and its actions
 * (`chat.editQueued`, `chat.removeQueued`, `chat.reorderQueued`, `chat.sendQueuedNow`,
 * `chat.resumeQueue`).
 */
export { indexedDbQueueStore, memoryQueueStore, queue } from '@preview-chat/core/queue'
export type {
  LockManagerLike,
  QueueOptions,
  QueueStore,
  QueuedMessage,
  WhenStopped,
} from '@preview-chat/core/queue'
