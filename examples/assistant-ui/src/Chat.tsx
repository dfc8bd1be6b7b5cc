import { AssistantRuntimeProvider, ComposerPrimitive, ThreadPrimitive } from '@assistant-ui/react'
import { usePreviewChatRuntime } from '@preview-chat/assistant-ui'
import { usePreviewChatSelector } from '@preview-chat/react'
import { AssistantMessage, UserMessage } from './Message'

const ids = { projectId: 'demo-project', agentId: 'demo-agent' }

/** One thread: assistant-ui's primitives over the preview-chat runtime. */
export function Chat({ threadId, isNew }: { threadId: string; isNew: boolean }) {
  const runtime = usePreviewChatRuntime({ ...ids, threadId, isNew })
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root className="thread">
        <StatusLine threadId={threadId} />
        <ThreadPrimitive.Viewport className="viewport">
          <ThreadPrimitive.Empty>
            <p className="hint">
              Ask anything. Try <code>/long 200</code> and reload mid-answer, <code>/suspend</code>,{' '}
              <code>/delegate 3000</code>, or a message with <code>**markdown**</code>.
            </p>
          </ThreadPrimitive.Empty>
          <ThreadPrimitive.Messages>
            {({ message }) => (message.role === 'user' ? <UserMessage /> : <AssistantMessage />)}
          </ThreadPrimitive.Messages>
        </ThreadPrimitive.Viewport>
        <ComposerPrimitive.Root className="composer">
          <ComposerPrimitive.Input aria-label="Message" placeholder="Write a message…" />
          <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
          <ComposerPrimitive.Cancel>Stop</ComposerPrimitive.Cancel>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  )
}

/** The session's status and errors, which assistant-ui has no words for. */
function StatusLine({ threadId }: { threadId: string }) {
  const key = { ...ids, threadId }
  const status = usePreviewChatSelector(key, (s) => s.status)
  const error = usePreviewChatSelector(key, (s) => s.error)
  const readError = usePreviewChatSelector(key, (s) => s.readError)
  return (
    <div className="status" role="status" data-testid="status" data-status={status}>
      {status}
      {readError && <span> · reconnecting (showing the last known transcript)</span>}
      {error && <span role="alert"> · {error.message}</span>}
    </div>
  )
}
