/**
 * Transcripts kept across a reload (`persistTranscripts`, opt-in): on screen in the first render
 * of the next page, `recovering` until the first read confirms or replaces them, forgotten on 404
 * or 403, scoped per user, bounded; a running answer's live text never shows less after a reload
 * than before it, until a record covers it (a record that ended wins at once).
 */
import { QueryClient } from '@tanstack/query-core'
import { describe, expect, it, vi } from 'vitest'
import { persistTranscripts } from '../persist'
import type { DraftStorage } from '../index'
import {
  assistantMessage,
  finishedTurn,
  runningTurn,
  settle,
  setup,
  snapshot,
  startLiveTurn,
  userMessage,
  useFakeTimersInEachTest,
} from './harness'
import { itemsOf, storageOrigin } from './world/storage'

useFakeTimersInEachTest()

/** A page of the app: a client (its own query client) over the tab's storage. */
function page(
  storage: DraftStorage,
  scope = 'alice',
  maxChars?: number,
  queryClient?: QueryClient,
) {
  return setup({
    scope,
    queryClient: queryClient ?? new QueryClient(),
    persist: persistTranscripts({ storage, ...(maxChars !== undefined && { maxChars }) }),
  })
}

const text = (t: ReturnType<typeof setup>) =>
  t.session
    .getState()
    .messages.map((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''))

/** A tab's sessionStorage (the world's: a quota, values as strings) in which a page kept thread t1's transcript ("Q", `answer`), then went away. */
async function kept(answer: string, record = finishedTurn('e1', 'Q', answer)) {
  const storage = storageOrigin().tab().sessionStorage
  const before = page(storage)
  before.server.answerRead(snapshot(record))
  await settle()
  await vi.advanceTimersByTimeAsync(1_000) // the throttled write
  before.session.dispose()
  return storage
}

describe('persistTranscripts [R-PERSIST-RELOAD]', () => {
  it('the transcript is on screen in the first render after a reload, recovering until the read', async () => {
    const storage = await kept('Kept answer')
    const after = page(storage)
    expect(after.states[0]).toMatchObject({ status: 'recovering', loaded: true })
    expect(text(after)).toEqual(['Q', 'Kept answer'])
    // The read replaces it.
    after.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'Kept answer, corrected')))
    await settle()
    expect(after.session.getState()).toMatchObject({ status: 'idle' })
    expect(text(after)).toEqual(['Q', 'Kept answer, corrected'])
    after.session.dispose()
  })

  it.each([404, 403])(
    'a read that answers %i forgets it, on screen and in storage',
    async (status) => {
      const storage = await kept('Secret')
      const after = page(storage)
      expect(text(after)).toEqual(['Q', 'Secret'])
      after.server.answerRead({ status, body: { code: status, message: 'No' } })
      await settle()
      expect(after.session.getState().messages).toEqual([])
      await vi.advanceTimersByTimeAsync(1_000)
      expect([...itemsOf(storage).values()].join('')).not.toContain('Secret')
      after.session.dispose()
    },
  )

  it.each([
    ['an hour ahead', (now: number) => now + 3_600_000],
    ['at the end of time', () => 1e308],
  ])(
    'a 403 forgets it even when it was kept while the clock ran %s (no timestamp decides)',
    async (_, keptAt) => {
      const storage = await kept('Secret')
      const key = 'preview-chat:transcripts:alice'
      const stored = JSON.parse(storage.getItem(key) ?? '') as { threads: { updatedAt: number }[] }
      for (const thread of stored.threads) thread.updatedAt = keptAt(Date.now())
      storage.setItem(key, JSON.stringify(stored))
      const after = page(storage)
      expect(text(after)).toEqual(['Q', 'Secret'])
      after.server.answerRead({ status: 403, body: { code: 403, message: 'No' } })
      await settle()
      await vi.advanceTimersByTimeAsync(1_000)
      expect([...itemsOf(storage).values()].join('')).not.toContain('Secret')
      after.session.dispose()
    },
  )

  it('a live turn JSON cannot hold fails its own write only: the other threads are kept, nothing throws', async () => {
    const storage = storageOrigin().tab().sessionStorage
    const warnings: string[] = []
    const persistence = persistTranscripts({ storage })
    persistence.attach(
      new QueryClient(),
      'alice',
      {
        setTimeout: (callback, ms) => setTimeout(callback, ms),
        clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
        now: () => Date.now(),
      },
      (message) => void warnings.push(message),
    )
    const turn = (executionId: string, input: unknown) => ({
      executionId,
      sessionId: 't1',
      user: userMessage(executionId, 'Q', 'running'),
      assistant: assistantMessage(
        executionId,
        [{ type: 'tool-call', toolCallId: 'c1', toolName: 'search', input } as never],
        'running',
      ),
      streams: {},
      delegations: {},
      resumes: null,
      ended: false,
    })
    persistence.keepLive('alice', 'broken', turn('e1', 10n))
    persistence.keepLive('alice', 'fine', turn('e2', { q: 'kept' }))
    await vi.advanceTimersByTimeAsync(250)
    expect(persistence.keptLive('alice', 'fine')?.executionId).toBe('e2')
    expect(persistence.keptLive('alice', 'broken')).toBeNull()
    expect(warnings).toEqual([expect.stringContaining('could not be kept')])
  })

  it('is scoped per user: bob never sees what alice kept', async () => {
    const storage = storageOrigin().tab().sessionStorage
    const alice = page(storage, 'alice')
    alice.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'For alice')))
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    alice.session.dispose()
    const bob = page(storage, 'bob')
    expect(bob.session.getState()).toMatchObject({ messages: [], loaded: false })
    bob.session.dispose()
  })

  it('is bounded: what does not fit in maxChars is not kept, and nothing stale stays', async () => {
    const storage = storageOrigin().tab().sessionStorage
    const small = page(storage, 'alice', 300)
    small.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'x'.repeat(500))))
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    expect(storage.length).toBe(0)
    small.session.dispose()
  })

  it('junk in storage is ignored: the thread is read as if nothing was kept', async () => {
    const storage = storageOrigin().tab().sessionStorage
    storage.setItem(
      'preview-chat:transcripts:alice',
      '{"v":1,"threads":[{"queryKey":["preview-chat","p1","a1","t1","messages"],"updatedAt":1,"data":{"messages":[{"id":7}]}}]}',
    )
    storage.setItem('preview-chat:live:alice:["p1","a1","t1"]', 'not json')
    const after = page(storage)
    expect(after.session.getState()).toMatchObject({
      messages: [],
      loaded: false,
      status: 'recovering',
    })
    after.session.dispose()
  })

  it('a reload mid-answer never shows less of it than before; a record that covers it takes over', async () => {
    const storage = storageOrigin().tab().sessionStorage
    const before = page(storage)
    const { stream } = await startLiveTurn(before, 'Q', {
      type: 'text-delta',
      id: 'x',
      delta: 'Part of the',
    })
    await vi.advanceTimersByTimeAsync(1_000)
    expect(text(before)).toEqual(['Q', 'Part of the'])
    before.session.dispose() // the reload (the spec's servers keep the turn running)
    void stream

    const after = page(storage)
    expect(text(after)).toEqual(['Q', 'Part of the'])
    // A record that lags behind what was on screen: the kept text stands.
    after.server.answerRead(runningTurn({ question: 'Q', text: 'Part' }))
    await settle()
    expect(text(after)).toEqual(['Q', 'Part of the'])
    expect(after.session.getState().status).toBe('following')
    // A record that has overtaken it is shown.
    after.push.updated('e1')
    await settle()
    after.server.answerRead(runningTurn({ question: 'Q', text: 'Part of the answer' }))
    await settle()
    expect(text(after)).toEqual(['Q', 'Part of the answer'])
    after.session.dispose()
  })

  it('a record that ended wins at once over the kept live text', async () => {
    const storage = storageOrigin().tab().sessionStorage
    const before = page(storage)
    await startLiveTurn(before, 'Q', { type: 'text-delta', id: 'x', delta: 'Part of the' })
    await vi.advanceTimersByTimeAsync(1_000)
    before.session.dispose()
    const after = page(storage)
    after.server.answerRead(
      snapshot([
        userMessage('e1', 'Q', 'cancelled'),
        assistantMessage('e1', [{ type: 'text', text: 'Part' }], 'cancelled'),
      ]),
    )
    await settle()
    expect(text(after)).toEqual(['Q', 'Part'])
    expect(after.session.getState()).toMatchObject({ status: 'idle' })
    after.session.dispose()
  })
})

/**
 * Issue 30: a page load validates the thread's record once. The kept transcript is checked when it
 * is restored; the first read's answer, which repeats it, takes those checked messages again (the
 * same objects) and validates only what changed. The query client shares no structure here
 * (`structuralSharing: false`), so what the cache holds is what the transport gave: a message's
 * identity says whether it was validated anew.
 */
describe('a page load validates the record once [R-PERSIST-RELOAD]', () => {
  it('the first read after a reload takes the kept messages it repeats, validated at restore', async () => {
    const record = [...finishedTurn('e1', 'Q', 'A'), ...finishedTurn('e2', 'Q2', 'B')]
    const storage = await kept('A', record)
    const unshared = new QueryClient({
      defaultOptions: { queries: { structuralSharing: false } },
    })
    const after = page(storage, 'alice', undefined, unshared)
    const restored = after.session.getState().messages
    expect(restored).toHaveLength(4)
    expect(after.session.getState().status).toBe('recovering')
    // The record changed in one message while the page was away: only that one is new.
    after.server.answerRead(
      snapshot([...record.slice(0, 3), ...finishedTurn('e2', 'Q2', 'B, corrected').slice(1)]),
    )
    await settle()
    const read = after.session.getState()
    expect(read.status).toBe('idle')
    for (let i = 0; i < 3; i++) expect(read.messages[i]).toBe(restored[i])
    expect(read.messages[3]).not.toBe(restored[3])
    expect(text(after)).toEqual(['Q', 'A', 'Q2', 'B, corrected'])
    after.session.dispose()
  })

  it('a read that brings the record as it was writes nothing (nor does the page hiding then)', async () => {
    const storage = await kept('A')
    const writes = vi.spyOn(storage, 'setItem')
    const after = page(storage)
    after.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    expect(after.session.getState().status).toBe('idle')
    await vi.advanceTimersByTimeAsync(1_000)
    expect(writes).not.toHaveBeenCalled()
    // A change is written, throttled, as before.
    const refreshed = after.session.refresh()
    await settle()
    after.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A, then more')))
    await refreshed
    await vi.advanceTimersByTimeAsync(1_000)
    expect(writes).toHaveBeenCalledTimes(1)
    after.session.dispose()
  })
})
