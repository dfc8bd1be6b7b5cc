/**
 * A server render hydrated in a browser that kept the thread's transcript (`persistTranscripts`):
 * the server had nothing kept, so the hydration snapshot leaves the kept transcript out (no
 * mismatch, no tree rebuilt), and the transcript shows in the render right after hydration.
 */
import { act } from '@testing-library/react'
import { hydrateRoot } from 'react-dom/client'
import { renderToString } from 'react-dom/server'
import { expect, it } from 'vitest'
import type { DraftStorage } from '@preview-chat/core'
import { createPreviewChatClient, PreviewChatProvider, usePreviewChat } from '../index'
import { persistTranscripts } from '../persist'

const key = { projectId: 'p', agentId: 'a', threadId: 't' }
const never = () => new Promise<Response>(() => {})

function Chat() {
  const chat = usePreviewChat(key)
  return (
    <p>
      {chat.status} {chat.messages.length}
    </p>
  )
}

it('hydrates without a mismatch when this browser kept the transcript, then shows it [R-PERSIST-RELOAD]', async () => {
  const serverClient = createPreviewChatClient({ fetch: never, push: false, relay: false })
  const html = renderToString(
    <PreviewChatProvider client={serverClient}>
      <Chat />
    </PreviewChatProvider>,
  )
  expect(html).toBe('<p>recovering<!-- --> <!-- -->0</p>')

  const items = new Map<string, string>()
  const storage: DraftStorage = {
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, v),
    removeItem: (k) => void items.delete(k),
  }
  const message = (role: 'user' | 'assistant') => ({
    id: `e1:${role}`,
    role,
    content: [{ type: 'text', text: role === 'user' ? 'Q' : 'Kept answer' }],
    executionId: 'e1',
    executionStatus: 'success',
    createdAt: '2026-01-01T00:00:00.000Z',
  })
  items.set(
    'preview-chat:transcripts:',
    JSON.stringify({
      v: 2,
      threads: [
        {
          queryKey: ['preview-chat', '', 'p', 'a', 't', 'messages'],
          data: {
            messages: [message('user'), message('assistant')],
            openSuspensions: [],
            activeExecutionId: null,
          },
          updatedAt: Date.now() - 1_000,
        },
      ],
    }),
  )
  const browserClient = createPreviewChatClient({
    fetch: never,
    push: false,
    relay: false,
    storage: null,
    persist: persistTranscripts({ storage }),
  })
  const container = document.createElement('div')
  container.innerHTML = html
  document.body.append(container)
  const recoverable: unknown[] = []
  await act(async () => {
    hydrateRoot(
      container,
      <PreviewChatProvider client={browserClient}>
        <Chat />
      </PreviewChatProvider>,
      { onRecoverableError: (error) => void recoverable.push(error) },
    )
  })
  expect(recoverable).toEqual([])
  expect(container.textContent).toBe('recovering 2')
  container.remove()
})
