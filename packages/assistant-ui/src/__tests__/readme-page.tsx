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

// `isNew`: the page just minted `threadId` (a new chat), so no read asks for a thread that does
// not exist yet; its first message creates it. Leave it out for a thread from a list or a URL.
function Chat({ threadId, isNew }: { threadId: string; isNew?: boolean }) {
  const runtime = usePreviewChatRuntime({
    projectId: 'demo-project',
    agentId: 'demo-agent',
    threadId,
    isNew,
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

export function App({
  threadId,
  user,
  isNew,
}: {
  threadId: string
  user: string
  isNew?: boolean
}) {
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
        <Chat threadId={threadId} isNew={isNew} />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}
