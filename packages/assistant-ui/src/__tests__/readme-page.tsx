'use client'
import {
  AssistantRuntimeProvider,
  ComposerPrimitive,
  MessagePartPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
} from '@assistant-ui/react'
import {
  PreviewChatComposerInput,
  PreviewChatMessageEnding,
  PreviewChatStatus,
  PreviewChatToolCall,
  usePreviewChatRuntime,
} from '@preview-chat/assistant-ui'
import { createPreviewChatClient, PreviewChatProvider } from '@preview-chat/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState } from 'react'

// `smooth={false}`: the kit's default Text types a part out from its first character whenever
// the part is new to the page, so after a reload a recovered answer would be typed out again.
const Text = () => <MessagePartPrimitive.Text smooth={false} />
const parts = { Text, tools: { Fallback: PreviewChatToolCall } }

function Chat({ threadId }: { threadId: string }) {
  const runtime = usePreviewChatRuntime({
    projectId: 'demo-project',
    agentId: 'demo-agent',
    threadId,
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
                <PreviewChatMessageEnding />
              </MessagePrimitive.Root>
            )}
          </ThreadPrimitive.Messages>
        </ThreadPrimitive.Viewport>
        <ComposerPrimitive.Root>
          <PreviewChatComposerInput aria-label="Message" />
          <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
          <ComposerPrimitive.Cancel>Stop</ComposerPrimitive.Cancel>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  )
}

export function App({ threadId, user }: { threadId: string; user: string }) {
  // Made once per page, never at module level: on a server a module outlives the request.
  const [clients] = useState(() => ({
    queryClient: new QueryClient(),
    // The reference server's users (alice, bob, carol) are named by this header; your server
    // has its own credentials (cookies need nothing here).
    client: createPreviewChatClient({
      baseUrl: '/rest',
      scope: user,
      headers: { authorization: `Bearer ${user}` },
    }),
  }))
  return (
    <QueryClientProvider client={clients.queryClient}>
      <PreviewChatProvider client={clients.client}>
        <Chat threadId={threadId} />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}
