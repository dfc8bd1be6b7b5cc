/**
 * Issue 36: what a page load of a 2,000-message thread costs once the history read answers,
 * counted (never timed) on the README's usage — `createPreviewChatClient` with its defaults, a
 * `QueryClient`, `usePreviewChat`, the list once `chat.loaded` — against the reference backend:
 * one `JSON.parse` of the history, one validation pass over its messages that keeps the very
 * objects `JSON.parse` made (no copy), one write of new data into the query cache, one
 * notification of the store React reads, one React commit of the 2,000 messages. The read the
 * push channel asks for once it connects brings nothing new (a 304): it adds none of these.
 */
import type { Message } from '@preview-chat/core'
import { setupPreviewChatServer } from '@preview-chat/msw/vitest'
import { threadKey, type MemoryStore } from '@preview-chat/server'
import { render, screen, waitFor } from '@testing-library/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { Profiler } from 'react'
import { afterEach, expect, it, vi } from 'vitest'
import { createPreviewChatClient, PreviewChatProvider, usePreviewChat } from '../index'

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })
const count = 2_000
const key = { projectId: 'p', agentId: 'a', threadId: crypto.randomUUID() }

afterEach(() => {
  vi.restoreAllMocks()
})

/** `count` finished messages, user and assistant in turns, as the bench's reload row seeds them. */
function recorded(): Message[] {
  return Array.from({ length: count }, (_, i) => {
    const executionId = `e${i >> 1}`
    const role = i % 2 ? ('assistant' as const) : ('user' as const)
    return {
      id: `${executionId}:${role}`,
      role,
      content: [{ type: 'text' as const, text: `${role} ${i}: part ${i} of the plan moved.` }],
      executionId,
      executionStatus: 'success' as const,
      createdAt: new Date(Date.UTC(2026, 11, 1) + i * 1000).toISOString(),
    }
  })
}

it('2,000 messages after the read: one parse, one pass, one cache write, one notification, one commit [R-READ-CONDITIONAL]', async () => {
  const store = chat.mock.backend.store as MemoryStore
  const state = store.exportState()
  state.threads.push([
    threadKey({ ownerId: 'alice', ...key }, key.threadId),
    {
      id: key.threadId,
      projectId: key.projectId,
      agentId: key.agentId,
      ownerId: 'alice',
      createdAt: new Date(Date.UTC(2026, 11, 1)).toISOString(),
      messages: recorded(),
      openSuspensions: [],
      activeExecutionId: null,
    },
  ])
  store.importState(state)

  // Every `JSON.parse` of a history body, and every read of a message's `createdAt` — a field
  // only the validation reads on a thread at rest (no live turn): one read per message per pass.
  const parse = JSON.parse
  const bodies: { data: { messages: Message[] } }[] = []
  let fieldReads = 0
  vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver) => {
    const value: unknown = parse(text, reviver)
    if (!text.includes('"openSuspensions"')) return value
    const body = value as (typeof bodies)[number]
    bodies.push(body)
    for (const message of body.data.messages) {
      const createdAt = message.createdAt
      Object.defineProperty(message, 'createdAt', {
        get: () => (fieldReads++, createdAt),
        enumerable: true,
        configurable: true,
      })
    }
    return value
  })

  const queryClient = new QueryClient()
  const writes: unknown[] = []
  queryClient.getQueryCache().subscribe((event) => {
    if (event.type === 'updated' && event.action.type === 'success') writes.push(event.action.data)
  })
  const client = createPreviewChatClient({
    baseUrl: 'http://localhost/rest',
    headers: { authorization: 'Bearer alice' }, // and so push over SSE, which carries them
  })
  const session = client.session({ ...key, queryClient })
  const notified: Message[][] = []
  const stopView = client.view(session).subscribe((state) => void notified.push(state.messages))
  let shown: Message[] = []
  const commits: number[] = []

  function Chat() {
    const state = usePreviewChat(key)
    shown = state.messages
    return state.loaded ? (
      <ol>
        {state.messages.map((message) => (
          <li key={message.id}>
            {message.role}:{' '}
            {message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')}
          </li>
        ))}
      </ol>
    ) : null
  }
  render(
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>
        <Profiler id="chat" onRender={() => void commits.push(shown.length)}>
          <Chat />
        </Profiler>
      </PreviewChatProvider>
    </QueryClientProvider>,
  )
  await waitFor(() => expect(screen.getAllByRole('listitem')).toHaveLength(count), {
    timeout: 20_000,
  })
  // The read after the push channel connects, answered and taken.
  const reads = () =>
    chat.mock.backend.inspect.requests.filter(
      (entry) => entry.route === 'messages' && entry.method === 'GET',
    )
  await waitFor(() => expect(reads().length).toBeGreaterThanOrEqual(2), { timeout: 20_000 })
  await waitFor(() => expect(writes.length).toBe(reads().length))
  await new Promise((resolve) => setTimeout(resolve, 100))

  expect(reads().map((entry) => entry.status)).toEqual([200, 304])
  // One parse of the history, and one validation pass over its messages, which keeps them.
  expect(bodies).toHaveLength(1)
  expect(fieldReads).toBe(count)
  const parsed = bodies[0]?.data.messages ?? []
  expect(shown).toHaveLength(count)
  shown.forEach((message, i) => expect(message).toBe(parsed[i]))
  // One write of new data into the query cache (the 304's write gives the same object back).
  expect(new Set(writes).size).toBe(1)
  // One notification of the store React reads with the messages, one commit of them.
  expect(notified.filter((messages) => messages.length === count)).toHaveLength(1)
  expect(commits.filter((length) => length === count)).toHaveLength(1)
  stopView()
  session.dispose()
})
