import {
  createPreviewChatClient,
  ssePush,
  type PreviewChatClientOptions,
  type SessionState,
} from '@preview-chat/core'
import {
  setupPreviewChatServer,
  type SetupPreviewChatServerOptions,
} from '@preview-chat/msw/vitest'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { cleanup, render, type RenderResult } from '@testing-library/react'
import { afterEach } from 'vitest'
import { StrictMode, useLayoutEffect, type ReactNode } from 'react'
import { PreviewChatProvider } from '../PreviewChatProvider'
import { usePreviewChat, type PreviewChat, type UsePreviewChatOptions } from '../usePreviewChat'

/**
 * The MSW-mounted reference backend for this test file. Components unmount before the mock goes
 * away after each test (hooks run last-registered first), so no request outlives its handlers.
 */
export function setupChat(options: SetupPreviewChatServerOptions) {
  const chat = setupPreviewChatServer(options)
  afterEach(async () => {
    cleanup()
    await new Promise((resolve) => setTimeout(resolve, 40)) // past the sessions' linger
  })
  return chat
}

/** A browser tab's client, against the MSW-mounted reference backend, as `user`. */
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

export function Providers({
  client,
  queryClient,
  strict = false,
  children,
}: {
  client: ReturnType<typeof createPreviewChatClient>
  queryClient?: QueryClient
  strict?: boolean
  children: ReactNode
}) {
  const tree = (
    <QueryClientProvider client={queryClient ?? new QueryClient()}>
      <PreviewChatProvider client={client}>{children}</PreviewChatProvider>
    </QueryClientProvider>
  )
  return strict ? <StrictMode>{tree}</StrictMode> : tree
}

/** Records the hook's result of every commit into `log`, and the latest into `latest`. */
export function createProbe() {
  const log: SessionState[] = []
  const probe = { log, latest: null as PreviewChat | null }
  function Probe(props: UsePreviewChatOptions) {
    const chat = usePreviewChat(props)
    useLayoutEffect(() => {
      if (log.at(-1) !== chat) log.push(chat)
      probe.latest = chat
    })
    return (
      <div>
        <p data-testid="status">{chat.status}</p>
        <ol>
          {chat.messages.map((message) => (
            <li key={message.id}>
              {message.role}:{' '}
              {message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')}
            </li>
          ))}
        </ol>
      </div>
    )
  }
  /** The statuses it went through, without repeats. */
  const statuses = () => log.map((s) => s.status).filter((s, i, all) => i === 0 || all[i - 1] !== s)
  const chat = () => {
    if (!probe.latest) throw new Error('the probe has not rendered yet')
    return probe.latest
  }
  return { Probe, probe, statuses, chat }
}

export const thread = (threadId: string = crypto.randomUUID()) => ({
  projectId: 'demo-project',
  agentId: 'demo-agent',
  threadId,
})

/** Renders a probe of `usePreviewChat` for `key` (as alice's tab unless a client is given). */
export function mountChat(
  key: UsePreviewChatOptions,
  client: ReturnType<typeof createPreviewChatClient> = tabClient(),
): ReturnType<typeof createProbe> & { view: RenderResult } {
  const probe = createProbe()
  const view = render(
    <Providers client={client}>
      <probe.Probe {...key} />
    </Providers>,
  )
  return { ...probe, view }
}
