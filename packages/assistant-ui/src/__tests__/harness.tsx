import {
  AssistantRuntimeProvider,
  ComposerPrimitive,
  MessagePartPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
  useAuiState,
  type AssistantRuntime,
  type TextMessagePartProps,
  type ToolCallMessagePartProps,
} from '@assistant-ui/react'
import {
  createPreviewChatClient,
  ssePush,
  PreviewChatProvider,
  type PreviewChatClientOptions,
  type ThreadKey,
} from '@preview-chat/react'
import {
  setupPreviewChatServer,
  type SetupPreviewChatServerOptions,
} from '@preview-chat/msw/vitest'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { cleanup, render, screen, type RenderResult } from '@testing-library/react'
import { afterEach } from 'vitest'
import { useLayoutEffect, type ReactNode } from 'react'
import { usePreviewChatRuntime, type UsePreviewChatRuntimeOptions } from '../usePreviewChatRuntime'

/** The MSW-mounted reference backend; components unmount before the mock goes away. */
export function setupChat(options: SetupPreviewChatServerOptions) {
  const chat = setupPreviewChatServer(options)
  afterEach(async () => {
    cleanup()
    await new Promise((resolve) => setTimeout(resolve, 40)) // past the sessions' linger
  })
  return chat
}

/** A browser tab's client against the mocked backend, as `user`. */
export function tabClient(user = 'alice', options: PreviewChatClientOptions = {}) {
  return createPreviewChatClient({
    baseUrl: 'http://localhost/rest',
    headers: { authorization: `Bearer ${user}` },
    push: ssePush(),
    scope: user,
    relay: false,
    lingerMs: 20,
    retry: { baseMs: 10, maxMs: 50 },
    poll: { baseMs: 20, maxMs: 100 },
    minReadIntervalMs: 20,
    ...options,
  })
}

export const thread = (threadId: string = crypto.randomUUID()) => ({
  projectId: 'demo-project',
  agentId: 'demo-agent',
  threadId,
})

const Text = ({ text }: TextMessagePartProps) => <span className="text">{text}</span>

/** Any tool call: its name, its status, an Approve button while it waits for a person. */
function Tool(props: ToolCallMessagePartProps) {
  return (
    <div data-testid={`tool-${props.toolName}`} data-status={props.status.type}>
      {props.toolName}
      {props.isError && ' (error)'}
      {props.result !== undefined && ` = ${JSON.stringify(props.result)}`}
      {props.interrupt && (
        <button type="button" onClick={() => props.resume({ approved: true })}>
          Approve
        </button>
      )}
      {props.messages && (
        <div data-testid="child">
          <MessagePartPrimitive.Messages>{() => <Message />}</MessagePartPrimitive.Messages>
        </div>
      )}
    </div>
  )
}

function Message() {
  const role = useAuiState((s) => s.message.role)
  const status = useAuiState((s) => s.message.status)
  return (
    <MessagePrimitive.Root
      data-testid={`message-${role}`}
      data-status={status?.type}
      data-reason={status && 'reason' in status ? status.reason : undefined}
    >
      <MessagePrimitive.Parts
        components={{
          Text,
          Reasoning: ({ text }) => <i className="reasoning">{text}</i>,
          tools: { Fallback: Tool },
        }}
      />
      <MessagePrimitive.Error>
        <p role="alert">{status && 'error' in status ? String(status.error) : ''}</p>
      </MessagePrimitive.Error>
    </MessagePrimitive.Root>
  )
}

/** A minimal thread of assistant-ui's primitives. */
export function Thread() {
  const isRunning = useAuiState((s) => s.thread.isRunning)
  return (
    <ThreadPrimitive.Root>
      <p data-testid="running">{String(isRunning)}</p>
      <ThreadPrimitive.Viewport>
        <ThreadPrimitive.Messages>{() => <Message />}</ThreadPrimitive.Messages>
      </ThreadPrimitive.Viewport>
      <ComposerPrimitive.Root>
        <ComposerPrimitive.Input aria-label="Message" />
        <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
        <ComposerPrimitive.Cancel>Stop</ComposerPrimitive.Cancel>
      </ComposerPrimitive.Root>
    </ThreadPrimitive.Root>
  )
}

/** What the test holds: the latest runtime the hook returned. */
export interface Probe {
  runtime: AssistantRuntime | null
}

function Chat({
  onRuntime,
  ...options
}: UsePreviewChatRuntimeOptions & { onRuntime: (runtime: AssistantRuntime) => void }) {
  const runtime = usePreviewChatRuntime(options)
  useLayoutEffect(() => {
    onRuntime(runtime)
  })
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <Thread />
    </AssistantRuntimeProvider>
  )
}

export function Providers({
  client,
  queryClient,
  children,
}: {
  client: ReturnType<typeof createPreviewChatClient>
  queryClient: QueryClient
  children: ReactNode
}) {
  return (
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>{children}</PreviewChatProvider>
    </QueryClientProvider>
  )
}

/** Renders the thread `options` names with the runtime, as alice's tab unless a client is given. */
export function mountChat(
  options: UsePreviewChatRuntimeOptions,
  client: ReturnType<typeof createPreviewChatClient> = tabClient(),
) {
  const probe: Probe = { runtime: null }
  const queryClient = new QueryClient()
  const view: RenderResult = render(
    <Providers client={client} queryClient={queryClient}>
      <Chat onRuntime={(runtime) => (probe.runtime = runtime)} {...options} />
    </Providers>,
  )
  const rerender = (next: UsePreviewChatRuntimeOptions) =>
    view.rerender(
      <Providers client={client} queryClient={queryClient}>
        <Chat onRuntime={(runtime) => (probe.runtime = runtime)} {...next} />
      </Providers>,
    )
  const runtime = () => {
    if (!probe.runtime) throw new Error('the chat has not rendered yet')
    return probe.runtime
  }
  /** The session the hook follows (the client keeps one per thread and QueryClient). */
  const session = (key: ThreadKey) => client.session({ ...key, queryClient })
  return { view, rerender, runtime, client, session }
}

export const input = () => screen.getByLabelText<HTMLTextAreaElement>('Message')
export const answers = () => screen.queryAllByTestId('message-assistant')
export const lastAnswer = () => {
  const all = answers()
  const last = all.at(-1)
  if (!last) throw new Error('no answer yet')
  return last
}
