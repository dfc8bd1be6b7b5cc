import type { ReactNode } from 'react'
import { usePreviewChatExtras } from './extras'

/**
 * "Send queued (N)": a button that resumes the session's queue (`chat.resumeQueue()`) once a Stop
 * or a failed turn paused it (`queue({ whenStopped: 'pause' })`, the default), and nothing
 * otherwise. assistant-ui's queue has no pause: a cancelled run keeps its items until the next
 * send, where ours waits for the person. `children` replaces the label; it is given the count.
 */
export function PreviewChatQueueResume({
  className,
  children = (count) => `Send queued (${count})`,
}: {
  className?: string
  children?: (count: number) => ReactNode
}) {
  const { chat } = usePreviewChatExtras()
  // The messages the pause holds: what the button sends (one queued after the Stop is not held).
  const count = chat.queue?.filter((message) => message.held).length ?? 0
  if (!chat.queuePaused || count === 0) return null
  return (
    <button type="button" className={className} onClick={() => chat.resumeQueue?.()}>
      {children(count)}
    </button>
  )
}
