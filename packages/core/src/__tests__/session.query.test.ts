/**
 * The session observes its history query in TanStack Query's cache: an app's
 * `invalidateQueries`, `refetchQueries` and `setQueryData` meet the session's one read path, and
 * Devtools see the query active while a session follows the thread.
 */
import { describe, expect, it, vi } from 'vitest'
import { QueryClient } from '@tanstack/query-core'
import { historyQueryKey } from '../index'
import {
  finishedTurn,
  key,
  runningTurn,
  settle,
  setup,
  snapshot,
  useFakeTimersInEachTest,
} from './harness'

useFakeTimersInEachTest()

const query = (t: ReturnType<typeof setup>) =>
  t.client.queryClient.getQueryCache().find({ queryKey: historyQueryKey(key), exact: true })

describe('the history query in TanStack Query [R-READ-QUERY]', () => {
  it('invalidateQueries on the history key makes exactly one read, whose answer the session shows', async () => {
    const t = setup()
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    expect(t.server.count('GET')).toBe(1)
    void t.client.queryClient.invalidateQueries({ queryKey: historyQueryKey(key) })
    await settle()
    expect(t.server.count('GET')).toBe(1 + 1)
    expect(t.session.getEngineState().reads.inFlight).toBe(true)
    t.server.answerRead(
      snapshot([...finishedTurn('e1', 'Q', 'A'), ...finishedTurn('e2', 'Q2', 'B')]),
    )
    await settle()
    expect(t.session.getState().messages.map((m) => m.id)).toEqual([
      'e1:user',
      'e1:assistant',
      'e2:user',
      'e2:assistant',
    ])
    expect(t.session.getEngineState().reads.inFlight).toBe(false)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(t.server.count('GET')).toBe(2)
    t.session.dispose()
  })

  it('refetchQueries reads once too; a read asked meanwhile waits for it', async () => {
    const t = setup()
    t.server.answerRead(runningTurn())
    await settle()
    void t.client.queryClient.refetchQueries({ queryKey: historyQueryKey(key) })
    await settle()
    t.push.updated('e1')
    t.push.updated('e1')
    await settle()
    // One in flight; the notifications wait behind it as one read.
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(runningTurn({ text: 'More' }))
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(runningTurn({ text: 'More still' }))
    await settle()
    expect(t.server.count('GET')).toBe(3)
    t.session.dispose()
  })

  it("setQueryData reaches the session's transcript", async () => {
    const t = setup()
    t.server.answerRead(snapshot([]))
    await settle()
    t.client.queryClient.setQueryData(historyQueryKey(key), snapshot(finishedTurn('e5', 'Q', 'Hi')))
    expect(t.session.getState().messages.map((m) => m.id)).toEqual(['e5:user', 'e5:assistant'])
    expect(t.server.count('GET')).toBe(1)
    t.session.dispose()
  })

  it('refresh() reads only while the session is listened to: at once resolved and nothing read when nobody listens', async () => {
    const t = setup({ lingerMs: 0 })
    t.server.answerRead(snapshot([]))
    await settle()
    const during = t.session.refresh()
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    let resolved = false
    void during.then(() => (resolved = true))
    t.unsubscribe() // the last listener leaves mid-read
    await vi.advanceTimersByTimeAsync(0)
    await settle()
    expect(resolved).toBe(true)
    await t.session.refresh()
    expect(t.server.count('GET')).toBe(2)
    t.session.dispose()
  })

  it("a read the app starts while the session is quiet is not the session's: it reads again once followed", async () => {
    const t = setup({ lingerMs: 0 })
    t.server.answerRead(snapshot([]))
    await settle()
    t.unsubscribe()
    await vi.advanceTimersByTimeAsync(0)
    // The app refetches every query, inactive ones too: the session hears neither start nor end.
    void t.client.queryClient.invalidateQueries({
      queryKey: historyQueryKey(key),
      refetchType: 'all',
    })
    await settle()
    expect(t.server.count('GET')).toBe(2)
    expect(t.session.getEngineState().reads.inFlight).toBe(false)
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    // The app holds the session and follows it again: it reads, and its refresh() settles.
    const seen: string[] = []
    const stop = t.session.subscribe((state) => seen.push(state.status))
    await settle()
    expect(t.server.count('GET')).toBe(3)
    expect(t.session.getEngineState().reads.inFlight).toBe(true)
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    expect(t.session.getEngineState().reads.inFlight).toBe(false)
    expect(seen.at(-1)).toBe('idle')
    expect(t.session.getState().messages).toHaveLength(2)
    // Nothing is stuck: a refresh() reads and settles with its answer.
    const refreshed = t.session.refresh()
    await settle()
    expect(t.server.count('GET')).toBe(4)
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await refreshed
    stop()
    t.session.dispose()
  })

  it('is active (observed) while the session is followed, and inactive once it went quiet', async () => {
    const t = setup({ lingerMs: 1_000 })
    t.server.answerRead(snapshot([]))
    await settle()
    expect(query(t)?.getObserversCount()).toBe(1)
    expect(query(t)?.isActive()).toBe(true)
    t.unsubscribe()
    await vi.advanceTimersByTimeAsync(1_000)
    expect(query(t)?.getObserversCount()).toBe(0)
    expect(query(t)?.isActive()).toBe(false)
    // The cache keeps the record for the next session of the thread (stale-while-revalidate).
    expect(query(t)?.state.data).toEqual(snapshot([]))
  })
})

describe('what the query cache holds is checked before a session takes it [R-READ-QUERY-CHECKED]', () => {
  const junk: [string, unknown][] = [
    ['messages that are a string', { messages: 'x', openSuspensions: [], activeExecutionId: null }],
    [
      'a message without fields',
      { messages: [{ id: 1 }], openSuspensions: [], activeExecutionId: null },
    ],
    [
      'open suspensions that are an object',
      { messages: [], openSuspensions: {}, activeExecutionId: null },
    ],
    ['a null suspension', { messages: [], openSuspensions: [null], activeExecutionId: null }],
    ['nothing like a snapshot', 42],
  ]

  it('what it holds is taken as a read would take it: a part of a type this client does not know is dropped', async () => {
    const t = setup()
    t.server.answerRead(snapshot([]))
    await settle()
    const [user, assistant] = finishedTurn('e1', 'Q', 'A')
    const newer = {
      ...assistant,
      content: [{ type: 'future-part', data: 1 }, ...(assistant?.content ?? [])],
    }
    t.client.queryClient.setQueryData(historyQueryKey(key), {
      ...snapshot([]),
      messages: [user, newer],
    })
    expect(t.session.getState().messages.at(-1)?.content).toEqual([{ type: 'text', text: 'A' }])
    t.session.dispose()
  })

  it.each(junk)(
    'at the start (hydrate, a persister, an older version): %s is ignored, reported, and the thread is read',
    async (_, value) => {
      const warnings: string[] = []
      const t = setup({
        onWarning: (message) => void warnings.push(message),
        queryClient: (() => {
          const client = new QueryClient()
          client.setQueryData(historyQueryKey(key), value)
          return client
        })(),
      })
      expect(t.session.getState()).toMatchObject({ messages: [], openSuspensions: [] })
      expect(warnings).toEqual([expect.stringContaining('Ignored what the query cache holds')])
      await settle()
      t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
      await settle()
      expect(t.session.getState().messages.map((m) => m.id)).toEqual(['e1:user', 'e1:assistant'])
      t.session.dispose()
    },
  )

  it.each(junk)(
    "an app's setQueryData of %s: the transcript stays, the failure is a readError, and a read puts the record back",
    async (_, value) => {
      const t = setup()
      t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
      await settle()
      t.client.queryClient.setQueryData(historyQueryKey(key), value)
      expect(t.session.getState().messages.map((m) => m.id)).toEqual(['e1:user', 'e1:assistant'])
      expect(t.session.getState().readError).toMatchObject({ code: 'invalid_response' })
      await vi.advanceTimersByTimeAsync(1_000)
      expect(t.server.pendingReads()).toBe(1)
      t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
      await settle()
      expect(t.session.getState().readError).toBeNull()
      expect(t.client.queryClient.getQueryData(historyQueryKey(key))).toMatchObject({
        messages: [{ id: 'e1:user' }, { id: 'e1:assistant' }],
      })
      t.session.dispose()
    },
  )
})
