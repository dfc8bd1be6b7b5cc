/**
 * `@preview-chat/assistant-ui/queue`: the session's queue as assistant-ui's
 * (`usePreviewChatRuntime({ queue: previewChatQueue })`, with a client made with `queue()`), in its
 * own entry so that an app without a queue bundles none of it.
 */
export { previewChatQueue } from './queueAdapter'
export type { PreviewChatQueue } from './queueAdapter'
export { useQueuedMessage } from './useQueuedMessage'
export { PreviewChatQueueResume } from './PreviewChatQueueResume'
