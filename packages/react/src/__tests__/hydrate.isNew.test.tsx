/**
 * `isNew` left on (`?new=1` kept in the URL) and the page reloaded: the server, which has no
 * localStorage, takes the hint as given and renders a new, empty thread; the browser remembers
 * that it made the thread before, so it must read. Hydration matches the server's HTML (no
 * recoverable error, no tree rebuilt), and the read follows once the session is followed.
 */
import { act, waitFor } from '@testing-library/react'
import { useLayoutEffect } from 'react'
import { hydrateRoot } from 'react-dom/client'
import { renderToString } from 'react-dom/server'
import { expect, it } from 'vitest'
import { PreviewChatProvider, usePreviewChat, type PreviewChatClient } from '../index'
import { setupChat, tabClient } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })
const reads = () => chat.mock.backend.inspect.countRequests({ route: 'messages', method: 'GET' })

function page(client: PreviewChatClient, threadId: string, seen: string[] = []) {
  function Chat() {
    const state = usePreviewChat({
      projectId: 'demo-project',
      agentId: 'demo-agent',
      threadId,
      isNew: true,
    })
    const text = `${state.status} ${state.messages.length}`
    useLayoutEffect(() => void (seen.at(-1) !== text && seen.push(text)))
    return <p>{text}</p>
  }
  return (
    <PreviewChatProvider client={client}>
      <Chat />
    </PreviewChatProvider>
  )
}

/** Renders as a server does: no localStorage, so the hint is taken as given. */
function renderOnServer(threadId: string): string {
  const localStorage = globalThis.localStorage
  Object.defineProperty(globalThis, 'localStorage', { value: undefined, configurable: true })
  try {
    return renderToString(page(tabClient(), threadId))
  } finally {
    Object.defineProperty(globalThis, 'localStorage', { value: localStorage, configurable: true })
  }
}

it('hydrates a reload with isNew still on without a mismatch, then reads the thread', async () => {
  const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
  // The first visit minted it in this browser, and showed it (a session followed: the hint is
  // used up then, not when a session is merely made — see isNew.test.tsx).
  const firstVisit = tabClient()
  firstVisit.session({ ...key, isNew: true }).subscribe(() => {})()
  firstVisit.dispose()

  const html = renderOnServer(key.threadId)
  expect(html).toBe('<p>idle 0</p>')

  const container = document.createElement('div')
  container.innerHTML = html
  document.body.append(container)
  const recoverable: unknown[] = []
  const seen: string[] = []
  const before = reads()
  await act(async () => {
    hydrateRoot(container, page(tabClient(), key.threadId, seen), {
      onRecoverableError: (error) => void recoverable.push(error),
    })
  })
  expect(recoverable).toEqual([])
  // The server's state first, then the thread as read, after hydration.
  await waitFor(() => expect(container.textContent).toBe('idle 2'), { timeout: 10_000 })
  expect(seen).toEqual(['idle 0', 'idle 2'])
  expect(reads() - before).toBeGreaterThan(0)
  container.remove()
})
