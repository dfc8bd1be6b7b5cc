/**
 * Issue 29, client message ids: a page left right after Send (before the server's first word)
 * keeps the draft as if unsent, while the server may run the turn. The draft's message id is kept
 * with it, so that after the reload the first read tells: the record holds it, the draft clears.
 * Against the reference backend in process; the POST is held until the page has gone, then
 * delivered (its bytes had left the browser), so nothing here depends on the machine's speed.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import { createPreviewChatClient, type PreviewChatClient } from '../index'
import { storageOrigin, type StorageTab } from './world/storage'

let backend: PreviewChatBackend | null = null
const clients: PreviewChatClient[] = []
afterEach(() => {
  for (const client of clients.splice(0)) client.dispose()
  backend?.close()
  backend = null
})

async function until(done: () => boolean) {
  for (let i = 0; i < 3_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 2))
  expect(done()).toBe(true)
}

describe('a draft whose page left right after Send keeps its message id across the reload [R-DRAFT-SENT-ID]', () => {
  it('the reloaded page shows the draft until its first read shows the message taken, then clears it, and nothing is sent twice', async () => {
    backend = createPreviewChatBackend({ dev: true, deltaMs: 0, snapshotMs: 5 })
    const server = backend
    // One browser's localStorage: each page a tab of the origin, the reload a new tab.
    const origin = storageOrigin()
    const tabs: StorageTab[] = []
    const threadId = crypto.randomUUID()
    const posts: string[] = []
    /** The first page's POST: held until that page has gone, then delivered. */
    let held: { deliver: () => Promise<Response> } | null = null
    const page = () => {
      tabs.at(-1)?.close()
      const tab = origin.tab()
      tabs.push(tab)
      const client = createPreviewChatClient({
        headers: { Authorization: 'Bearer alice' },
        scope: 'alice',
        storage: tab.localStorage,
        push: false,
        relay: false,
        lingerMs: 0,
        minReadIntervalMs: 5,
        poll: { baseMs: 5, maxMs: 10 },
        fetch: async (input, init) => {
          const request = new Request(new URL(String(input), 'http://x'), init)
          if (request.method === 'POST' && request.url.endsWith('/chat')) {
            const body = await request.clone().text()
            posts.push(body)
            if (posts.length === 1) {
              // The page goes before any answer; the request had left: the server takes it.
              const delivered = new Request(request.url, {
                method: 'POST',
                headers: request.headers,
                body,
              })
              held = { deliver: () => server.fetch(delivered) }
              return new Promise<Response>(() => {})
            }
          }
          return server.fetch(request)
        },
      })
      clients.push(client)
      return client
    }

    const first = page()
    const before = first.session({ projectId: 'p', agentId: 'a', threadId, isNew: true })
    await until(() => before.getState().status === 'idle')
    before.setDraft('Hi, kept across the reload')
    void before.submit()
    await until(() => held !== null)
    const sentAs = (JSON.parse(posts[0] ?? '{}') as { messageId?: string }).messageId
    expect(sentAs).toMatch(/^[0-9a-f-]{36}$/)
    first.dispose() // the page goes, its draft and the draft's message id in storage
    const turn = await (held as { deliver: () => Promise<Response> } | null)!.deliver()
    await turn.text() // the turn runs to its end on the server

    const again = page()
    const after = again.session({ projectId: 'p', agentId: 'a', threadId })
    const drafts: string[] = [after.getState().draft]
    after.subscribe((state) => {
      if (drafts.at(-1) !== state.draft) drafts.push(state.draft)
    })
    expect(after.getState().draft).toBe('Hi, kept across the reload')
    await until(() => after.getState().status === 'idle' && after.getState().draft === '')
    const users = after.getState().messages.filter((m) => m.role === 'user')
    expect(users.map((m) => m.messageId)).toEqual([sentAs])
    expect(drafts).toEqual(['Hi, kept across the reload', ''])
    expect(Object.keys(origin.entries()).filter((k) => k.startsWith('preview-chat:draft'))).toEqual(
      [],
    )
    expect(posts).toHaveLength(1)
  })
})
