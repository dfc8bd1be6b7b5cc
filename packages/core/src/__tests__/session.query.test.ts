/**
 * The session observes its history query in TanStack Query's cache: an app's
 * `invalidateQueries`, `refetchQueries` and `setQueryData` meet the session's one read path, and
 * Devtools see the query active while a session follows the thread.
 */
import { describe, expect, it, vi } from 'vitest'
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
