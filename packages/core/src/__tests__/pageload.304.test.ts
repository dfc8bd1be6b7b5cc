/**
 * Issue 30: a history read that brings nothing new — a `304 Not Modified`, or a 200 whose body is
 * the one held — must not produce a new state: no notification to the session's subscribers, the
 * same `getState()` object, so a UI re-renders nothing. The transport already gives back the same
 * snapshot object (transport.conditional.test.ts); what is asserted here is the session's public
 * state and its notifications, through the store a UI reads (`session.store` and `client.view`).
 */
import { describe, expect, it, vi } from 'vitest'
import { createPreviewChatClient } from '../index'
import type { HistorySnapshot } from '../contract'
import { finishedTurn, key, settle, snapshot } from './harness'

/** History reads with weak ETags as the reference server and n8n 2.41 send them. */
function conditionalServer(options: { etags?: boolean } = {}) {
  let current = { body: '', version: 0 }
  const statuses: number[] = []
  const fetch = vi.fn(async (_input: RequestInfo | URL, init?: RequestInit) => {
    const etag = `W/"v${current.version}"`
    const ifNoneMatch = new Headers(init?.headers).get('if-none-match')
    if (options.etags !== false && ifNoneMatch === etag) {
      statuses.push(304)
      return new Response(null, { status: 304, headers: { etag } })
    }
    statuses.push(200)
    return new Response(current.body, {
      headers: { 'content-type': 'application/json', ...(options.etags !== false && { etag }) },
    })
  })
  return {
    fetch,
    statuses,
    set(value: HistorySnapshot) {
      current = { body: JSON.stringify({ data: value }), version: current.version + 1 }
    },
  }
}

function loadedSession(server: ReturnType<typeof conditionalServer>) {
  const client = createPreviewChatClient({
    fetch: server.fetch,
    push: false,
    relay: false,
    storage: null,
    minReadIntervalMs: 0,
    resumeSignal: () => () => {},
    onWarning: () => {},
  })
  const session = client.session(key)
  return { client, session }
}

describe('a read with nothing new makes no new state [R-READ-CONDITIONAL]', () => {
  for (const [name, etags] of [
    ['a 304', true],
    ['a 200 with the body held (no ETag)', false],
  ] as const)
    it(`${name}: no notification, the same state object`, async () => {
      const server = conditionalServer({ etags })
      server.set(snapshot(finishedTurn('e1', 'Q', 'A')))
      const { client, session } = loadedSession(server)
      const notified: unknown[] = []
      const stop = session.subscribe((state) => notified.push(state))
      // What a UI reads: the client's throttled view (React's `usePreviewChat`).
      const view = client.view(session)
      const viewed: unknown[] = []
      const stopView = view.subscribe((state) => viewed.push(state))
      await settle()
      const loaded = session.getState()
      expect(loaded).toMatchObject({ status: 'idle', loaded: true })
      const seen = notified.length
      const seenView = viewed.length
      const shown = view.getState()

      await session.refresh()
      await settle()
      await session.refresh()
      await settle()

      expect(server.statuses).toEqual(etags ? [200, 304, 304] : [200, 200, 200])
      expect(session.getState()).toBe(loaded)
      expect(view.getState()).toBe(shown)
      expect(notified.length - seen).toBe(0)
      expect(viewed.length - seenView).toBe(0)
      stopView()
      stop()
      session.dispose()
    })

  it('a read that brings a change still notifies, once', async () => {
    const server = conditionalServer()
    server.set(snapshot(finishedTurn('e1', 'Q', 'A')))
    const { session } = loadedSession(server)
    const notified: unknown[] = []
    const stop = session.subscribe((state) => notified.push(state))
    await settle()
    const loaded = session.getState()
    const seen = notified.length
    server.set(snapshot([...finishedTurn('e1', 'Q', 'A'), ...finishedTurn('e2', 'Q2', 'B')]))
    await session.refresh()
    await settle()
    expect(server.statuses).toEqual([200, 200])
    expect(session.getState()).not.toBe(loaded)
    expect(session.getState().messages).toHaveLength(4)
    expect(session.getState().messages[0]).toBe(loaded.messages[0])
    expect(notified.length - seen).toBe(1)
    stop()
    session.dispose()
  })
})
