import {
  AssistantRuntimeProvider,
  ComposerPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
} from '@assistant-ui/react'
import { usePreviewChatRuntime } from '@preview-chat/assistant-ui'
import { createPreviewChatClient, PreviewChatProvider } from '@preview-chat/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'

const queryClient = new QueryClient()
const client = createPreviewChatClient({ baseUrl: '/rest', scope: 'alice' })

function Chat({ threadId }: { threadId: string }) {
  const runtime = usePreviewChatRuntime({ projectId: 'p1', agentId: 'a1', threadId })
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root>
        <ThreadPrimitive.Viewport>
          <ThreadPrimitive.Messages>
            {() => (
              <MessagePrimitive.Root>
                <MessagePrimitive.Parts />
              </MessagePrimitive.Root>
            )}
          </ThreadPrimitive.Messages>
        </ThreadPrimitive.Viewport>
        <ComposerPrimitive.Root>
          <ComposerPrimitive.Input aria-label="Message" />
          <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
          <ComposerPrimitive.Cancel>Stop</ComposerPrimitive.Cancel>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  )
}

export function App({ threadId }: { threadId: string }) {
  return (
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>
        <Chat threadId={threadId} />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}
