'use client'
import {
  AssistantRuntimeProvider,
  ComposerPrimitive,
  MessagePartPrimitive,
  MessagePrimitive,
  QueueItemPrimitive,
  ThreadPrimitive,
} from '@assistant-ui/react'
import {
  PreviewChatComposerInput,
  PreviewChatStatus,
  PreviewChatToolCall,
  usePreviewChatRuntime,
} from '@preview-chat/assistant-ui'
// The queue's parts are their own import: an app without a queue bundles none of them.
import {
  PreviewChatQueueResume,
  previewChatQueue,
  useQueuedMessage,
} from '@preview-chat/assistant-ui/queue'
import { createPreviewChatClient, PreviewChatProvider } from '@preview-chat/react'
import { queue } from '@preview-chat/react/queue'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState } from 'react'

const Text = () => <MessagePartPrimitive.Text smooth={false} />
const parts = { Text, tools: { Fallback: PreviewChatToolCall } }

/** One queued message: its text, where it stands, "Run now" (next, once the thread is free), remove. */
function QueueItem() {
  const message = useQueuedMessage()
  return (
    <li data-status={message?.status}>
      <QueueItemPrimitive.Text />
      {message?.error && <small role="alert">{message.error.message}</small>}
      <QueueItemPrimitive.Steer>Run now</QueueItemPrimitive.Steer>
      <QueueItemPrimitive.Remove>Remove</QueueItemPrimitive.Remove>
    </li>
  )
}

function Chat({ threadId, isNew }: { threadId: string; isNew?: boolean }) {
  // `queue: previewChatQueue` gives assistant-ui the session's queue: Send works while a turn runs.
  const runtime = usePreviewChatRuntime({
    projectId: 'demo-project',
    agentId: 'demo-agent',
    threadId,
    isNew,
    queue: previewChatQueue,
  })
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root>
        <PreviewChatStatus />
        <ThreadPrimitive.Viewport>
          <ThreadPrimitive.Messages>
            {() => (
              <MessagePrimitive.Root>
                <MessagePrimitive.Parts components={parts} />
              </MessagePrimitive.Root>
            )}
          </ThreadPrimitive.Messages>
        </ThreadPrimitive.Viewport>
        <ComposerPrimitive.Root>
          <ol aria-label="Queued">
            <ComposerPrimitive.Queue>{() => <QueueItem />}</ComposerPrimitive.Queue>
          </ol>
          <PreviewChatQueueResume />
          <PreviewChatComposerInput aria-label="Message" />
          <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
          <ComposerPrimitive.Cancel>Stop</ComposerPrimitive.Cancel>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  )
}

// `isNew`: the app just minted `threadId` (no read asks for a thread that does not exist yet).
export function App({
  threadId,
  user,
  isNew,
}: {
  threadId: string
  user: string
  isNew?: boolean
}) {
  const [clients] = useState(() => ({
    queryClient: new QueryClient(),
    client: createPreviewChatClient({
      baseUrl: '/rest',
      scope: user,
      headers: { authorization: `Bearer ${user}` },
      // The client's queue, kept in IndexedDB under `scope` for every tab of the user. After a
      // Stop what was queued then waits for "Send queued (N)" (`whenStopped: 'pause'`); a message
      // queued after the Stop goes once the thread is free.
      queue: queue({ whenStopped: 'pause' }),
    }),
  }))
  return (
    <QueryClientProvider client={clients.queryClient}>
      <PreviewChatProvider client={clients.client}>
        <Chat threadId={threadId} isNew={isNew} />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}
