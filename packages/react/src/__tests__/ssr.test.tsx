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

it("two requests rendered through one module share no session: the second never gets the first one's state", async () => {
  const { renderToString } = await import('react-dom/server')
  const { PreviewChatProvider, createPreviewChatClient, usePreviewChat } = await import('../index')
  // The module: one client, made at module level as a page might (the README makes it per page).
  let user = ''
  const client = createPreviewChatClient({
    baseUrl: 'https://example.test/rest',
    headers: () => ({ authorization: `Bearer ${user}` }),
    push: false,
  })
  const key = { projectId: 'p', agentId: 'a', threadId: 'shared-id' }
  function Chat({ isNew }: { isNew?: boolean }) {
    const chat = usePreviewChat({ ...key, ...(isNew && { isNew }) })
    return <p>{`${chat.status} ${String(chat.loaded)}`}</p>
  }
  const request = async (who: string, isNew?: boolean) => {
    user = who
    const html = renderToString(
      <PreviewChatProvider client={client}>
        <Chat isNew={isNew} />
      </PreviewChatProvider>,
    )
    await new Promise((resolve) => setTimeout(resolve, 0)) // the request is over
    return html
  }

  // alice's page minted the id (isNew: nothing to read); bob's opens the same id from a link.
  expect(await request('alice', true)).toContain('idle true')
  const bobs = await request('bob')
  expect(bobs).not.toContain('idle')
  expect(bobs).toContain('recovering false')
})
