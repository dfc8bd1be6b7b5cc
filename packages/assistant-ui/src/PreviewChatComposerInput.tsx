import { ComposerPrimitive, useAuiState } from '@assistant-ui/react'
import type { ComponentProps, KeyboardEvent } from 'react'

type InputProps = ComponentProps<typeof ComposerPrimitive.Input>

/**
 * assistant-ui's `ComposerPrimitive.Input`, except that Enter while the message cannot be sent
 * (a turn runs, here or in another tab, and the client has no queue) does nothing: the kit lets
 * that key through, and the stray newline would stay in the draft across a reload. With a queue
 * (`queue()` on the client), Enter sends: the message waits in the queue. Shift+Enter still
 * breaks the line.
 */
export function PreviewChatComposerInput({ onKeyDown, ...props }: InputProps) {
  const blocked = useAuiState(
    (s) => s.thread.isSendDisabled || (s.thread.isRunning && !s.thread.capabilities.queue),
  )
  const keyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    onKeyDown?.(event)
    if (blocked && event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing)
      event.preventDefault()
  }
  return <ComposerPrimitive.Input {...props} onKeyDown={keyDown} />
}
