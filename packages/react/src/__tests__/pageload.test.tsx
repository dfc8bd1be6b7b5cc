/**
 * Issue 30: the hook starts a thread's first read at the first render that names the thread,
 * not when React subscribes (a passive effect after the commit, often a frame later); the session
 * takes that read as its first, so a load still sends one read — under StrictMode too — and a
 * disabled hook sends none.
 */
import { createPreviewChatClient } from '@preview-chat/core'
import { render, screen, waitFor, cleanup } from '@testing-library/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode, useEffect, useLayoutEffect } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { PreviewChatProvider } from '../PreviewChatProvider'
import { usePreviewChat } from '../usePreviewChat'

afterEach(async () => {
  cleanup()
  await new Promise((resolve) => setTimeout(resolve, 40)) // past the sessions' linger
})

const record = {
  messages: [
    {
      id: 'e1:user',
      role: 'user',
      content: [{ type: 'text', text: 'Q' }],
      executionId: 'e1',
      executionStatus: 'success',
      createdAt: '2026-12-01T09:00:00.000Z',
    },
  ],
  openSuspensions: [],
  activeExecutionId: null,
}

function harness() {
  const events: string[] = []
  const client = createPreviewChatClient({
    baseUrl: '/rest',
    push: false,
    relay: false,
    storage: null,
    lingerMs: 20,
    fetch: async (input) => {
      events.push(`fetch ${new URL(String(input), 'http://test').pathname.split('/').at(-1)}`)
      return Response.json({ data: record })
    },
  })
  function Chat({ enabled }: { enabled?: boolean }) {
    events.push('render')
    const chat = usePreviewChat({
      projectId: 'p',
      agentId: 'a',
      threadId: 't1',
      ...(enabled !== undefined && { enabled }),
    })
    useLayoutEffect(() => void events.push('commit'), [])
    useEffect(() => void events.push('effect'), [])
    return <p data-testid="count">{chat.loaded ? chat.messages.length : 'loading'}</p>
  }
  const mount = (options: { strict?: boolean; enabled?: boolean } = {}) => {
    const tree = (
      <QueryClientProvider client={new QueryClient()}>
        <PreviewChatProvider client={client}>
          <Chat {...(options.enabled !== undefined && { enabled: options.enabled })} />
        </PreviewChatProvider>
      </QueryClientProvider>
    )
    return render(options.strict ? <StrictMode>{tree}</StrictMode> : tree)
  }
  const reads = () => events.filter((e) => e === 'fetch messages').length
  return { events, mount, reads }
}

describe('the first read starts at the first render [R-READ-PREFETCH]', () => {
  it('sent during the first render, before the commit, and taken as the first read', async () => {
    const { events, mount, reads } = harness()
    mount()
    expect(events.indexOf('fetch messages')).toBeGreaterThan(events.indexOf('render'))
    expect(events.indexOf('fetch messages')).toBeLessThan(events.indexOf('commit'))
    await waitFor(() => expect(screen.getByTestId('count').textContent).toBe('1'))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(reads()).toBe(1)
  })

  it('one read under StrictMode (two renders, an effect run twice)', async () => {
    const { mount, reads } = harness()
    mount({ strict: true })
    await waitFor(() => expect(screen.getByTestId('count').textContent).toBe('1'))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(reads()).toBe(1)
  })

  it('none for a disabled hook', async () => {
    const { mount, reads } = harness()
    mount({ enabled: false })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(reads()).toBe(0)
    expect(screen.getByTestId('count').textContent).toBe('loading')
  })
})
