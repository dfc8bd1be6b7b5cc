/**
 * Issue 30: a history read that brings nothing new — a `304 Not Modified`, or a 200 whose body is
 * the one held — must not produce a new state: no notification to the session's subscribers, the
 * same `getState()` object, so a UI re-renders nothing. The transport already gives back the same
 * snapshot object (transport.conditional.test.ts); what is asserted here is the session's public
 * state and its notifications, through the store a UI reads (`session.store` and `client.view`).
 */
import { describe, expect, it } from 'vitest'
import { conditionalServer, finishedTurn, key, readsOnlyClient, settle, snapshot } from './harness'

function loadedSession(server: ReturnType<typeof conditionalServer>) {
  const client = readsOnlyClient(server.fetch)
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
      server.set('t1', snapshot(finishedTurn('e1', 'Q', 'A')))
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
    server.set('t1', snapshot(finishedTurn('e1', 'Q', 'A')))
    const { session } = loadedSession(server)
    const notified: unknown[] = []
    const stop = session.subscribe((state) => notified.push(state))
    await settle()
    const loaded = session.getState()
    const seen = notified.length
    server.set('t1', snapshot([...finishedTurn('e1', 'Q', 'A'), ...finishedTurn('e2', 'Q2', 'B')]))
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
