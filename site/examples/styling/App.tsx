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
  PreviewChatStatus,
  usePreviewChatRuntime,
} from '@preview-chat/assistant-ui'
import { createPreviewChatClient, PreviewChatProvider } from '@preview-chat/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useState } from 'react'

const Text = () => <MessagePartPrimitive.Text smooth={false} />

function Chat({ threadId, isNew }: { threadId: string; isNew?: boolean }) {
  const runtime = usePreviewChatRuntime({
    projectId: 'demo-project',
    agentId: 'demo-agent',
    threadId,
    isNew,
  })
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root className="flex flex-col gap-2">
        <PreviewChatStatus className="text-sm data-[status=recovering]:text-amber-700" />
        <ThreadPrimitive.Viewport className="flex flex-col gap-1">
          <ThreadPrimitive.Messages>
            {() => (
              <MessagePrimitive.Root className="rounded-md bg-slate-100 px-3 py-2">
                <MessagePrimitive.Parts components={{ Text }} />
              </MessagePrimitive.Root>
            )}
          </ThreadPrimitive.Messages>
        </ThreadPrimitive.Viewport>
        <ComposerPrimitive.Root className="flex gap-2">
          {/* The border preflight took away, and a focus ring. */}
          <PreviewChatComposerInput
            aria-label="Message"
            className="min-h-12 flex-1 rounded-md border border-slate-400 px-2 py-1 focus-visible:outline-2 focus-visible:outline-blue-600"
          />
          <ComposerPrimitive.Send className="rounded-md border border-slate-400 px-3 disabled:opacity-50">
            Send
          </ComposerPrimitive.Send>
          <ComposerPrimitive.Cancel className="rounded-md border border-slate-400 px-3">
            Stop
          </ComposerPrimitive.Cancel>
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
