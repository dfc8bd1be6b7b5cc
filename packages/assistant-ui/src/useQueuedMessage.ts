import { useAuiState } from '@assistant-ui/react'
import type { QueuedMessage } from '@preview-chat/react/queue'
import { usePreviewChatExtras } from './extras'

/**
 * Inside `ComposerPrimitive.Queue`, the session's own word on this queue item: its `status`
 * (`queued`, `sending`, `undelivered`) and `error`, which assistant-ui's `QueueItemState` has no
 * place for. `undefined` for an item the session's queue no longer holds (a render behind).
 */
export function useQueuedMessage(): QueuedMessage | undefined {
  const id = useAuiState((s) => s.queueItem.id)
  const { chat } = usePreviewChatExtras()
  return chat.queue?.find((message) => message.id === id)
}
