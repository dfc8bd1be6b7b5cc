// @vitest-environment node
import { afterEach, expect, it, vi } from 'vitest'

afterEach(() => {
  vi.unstubAllGlobals()
})

it('renders on a server without touching window, document, sessionStorage or BroadcastChannel', async () => {
  // A server has no window, document or sessionStorage; Node has a BroadcastChannel and a fetch,
  // which a server render must not use either.
  expect(typeof window).toBe('undefined')
  expect(typeof document).toBe('undefined')
  expect(typeof sessionStorage).toBe('undefined')
  const opened: string[] = []
  vi.stubGlobal(
    'BroadcastChannel',
    class {
      constructor(name: string) {
        opened.push(name)
      }
    },
  )
  const fetch = vi.fn()
  vi.stubGlobal('fetch', fetch)
  vi.stubGlobal(
    'WebSocket',
    class {
      constructor() {
        opened.push('websocket')
      }
    },
  )

  const { renderToString } = await import('react-dom/server')
  const { PreviewChatProvider, createPreviewChatClient, usePreviewChat } = await import('../index')
  const client = createPreviewChatClient({ baseUrl: 'https://example.test/rest' })
  function Chat() {
    const chat = usePreviewChat({ projectId: 'p', agentId: 'a', threadId: 't' })
    return (
      <p>
        {chat.status} {chat.messages.length} [{chat.draft}]
      </p>
    )
  }
  const html = renderToString(
    <PreviewChatProvider client={client}>
      <Chat />
    </PreviewChatProvider>,
  )
  expect(html).toContain('recovering')
  expect(html).toContain('[<!-- -->]')
  expect(opened).toEqual([])
  expect(fetch).not.toHaveBeenCalled()
})
