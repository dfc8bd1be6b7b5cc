/**
 * A POST whose answer is cut before any event (issue 29): on a server that dedupes (the reference
 * server's spec flavor says `message-dedupe` on its turn streams) it is sent once more with the
 * same `messageId` and recorded once; on the released n8n 2.41 (no such header) it is never sent
 * again, and the record says what happened. Against the reference backend, in process.
 */
import { afterEach, describe, expect, it } from 'vitest'
// Relative imports keep the workspace free of a core ⇄ server/msw dependency cycle (test-only).
import { cutAfterEvents } from '../../../msw/src/streamCut'
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import type { FlavorName } from '../../../server/src/flavor/types'
import { createPreviewChatClient, type SessionState } from '../index'

let backend: PreviewChatBackend
afterEach(() => backend.close())

const auth: Record<FlavorName, Record<string, string>> = {
  spec: { Authorization: 'Bearer alice' },
  'n8n-2.41': { cookie: 'n8n-auth=alice', 'browser-id': 'browser-1' },
  'next-era': { Authorization: 'Bearer alice' },
}

/** A tab whose first chat POST's answer is cut before its first event (what a dropped connection does). */
function tab(flavor: FlavorName) {
  backend = createPreviewChatBackend({ dev: true, flavor, deltaMs: 0, snapshotMs: 5 })
  const posted: { messageId?: string; message: string }[] = []
  const client = createPreviewChatClient({
    headers: auth[flavor],
    fetch: async (input, init) => {
      const request = new Request(new URL(String(input), 'http://x'), init)
      const isChat = request.method === 'POST' && request.url.endsWith('/chat')
      if (isChat) posted.push(JSON.parse(String(init?.body)) as (typeof posted)[number])
      const response = await backend.fetch(request)
      if (!isChat || posted.length > 1 || !response.body) return response
      const body = cutAfterEvents(response.body, { afterEvents: 0, mode: 'error' }, () => {})
      return new Response(body, response)
    },
    push: false,
    relay: false,
    storage: null,
    lingerMs: 0,
    minReadIntervalMs: 5,
    retry: { baseMs: 5, maxMs: 20 },
  })
  const session = client.session({ projectId: 'p', agentId: 'a', threadId: crypto.randomUUID() })
  const statuses: SessionState['status'][] = []
  const stop = session.subscribe((state) => {
    if (statuses.at(-1) !== state.status) statuses.push(state.status)
  })
  return { session, posted, statuses, stop }
}

async function until(done: () => boolean) {
  for (let i = 0; i < 2_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 2))
  expect(done()).toBe(true)
}

describe('a POST cut before any event [R-POST-RETRY-DEDUPE]', () => {
  it('on a server that dedupes: sent once more with the same messageId, accepted, recorded once', async () => {
    const t = tab('spec')
    await until(() => t.session.getState().status === 'idle')
    const result = await t.session.submit('Hello there')
    expect(result).toEqual({ outcome: 'accepted', executionId: null })
    expect(t.posted).toHaveLength(2)
    expect(t.posted[1]).toEqual(t.posted[0])
    expect(t.posted[0]?.messageId).toMatch(/^[0-9a-f-]{36}$/)
    await until(() => {
      const { status, messages } = t.session.getState()
      return status === 'idle' && messages.at(-1)?.executionStatus === 'success'
    })
    const { messages, draft } = t.session.getState()
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(1)
    expect(draft).toBe('')
    // Submitting through the lost answer and the second POST, then what the read found (the turn
    // running, or ended already), then idle: never "not sent", never a second turn.
    expect(t.statuses.slice(0, 2)).toEqual(['idle', 'submitting'])
    expect(t.statuses.at(-1)).toBe('idle')
    expect(t.statuses).not.toContain('streaming')
    t.stop()
  })

  it('on the released n8n 2.41 (no dedupe): never sent again; the record decides [R-N8N-NO-DEDUPE]', async () => {
    const t = tab('n8n-2.41')
    await until(() => t.session.getState().status === 'idle')
    const result = await t.session.submit('Hello there')
    expect(result).toMatchObject({ outcome: 'failed', error: { code: 'stream_cut' } })
    await until(() => t.session.getState().status === 'idle')
    expect(t.posted).toHaveLength(1)
    expect(t.session.getEngineState().dedupesMessages).toBe(false)
    t.stop()
  })
})
