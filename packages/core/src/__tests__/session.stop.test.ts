import { describe, expect, it, vi } from 'vitest'
import {
  assistantMessage,
  empty,
  finishedTurn,
  settle,
  setup,
  snapshot,
  userMessage,
  startLiveTurn,
  runningTurn,
  useFakeTimersInEachTest,
} from './harness'

useFakeTimersInEachTest()

const running = (executionId: string) => runningTurn({ executionId })
const cancelled = (id: string) =>
  snapshot(
    [
      userMessage(id, 'Q', 'cancelled'),
      assistantMessage(id, [{ type: 'text', text: 'Part' }], 'cancelled'),
    ],
    null,
  )

/** A message is posted and Stop pressed before the server accepted it. */
async function stopBeforeAcceptance(t: ReturnType<typeof setup>) {
  t.server.answerRead(empty)
  await settle()
  t.session.setDraft('Q')
  void t.session.submit()
  await settle()
  const result = t.session.stop()
  await settle()
  return { result }
}

/** The last request was the Stop of `executionId`. */
function expectStopOf(t: ReturnType<typeof setup>, executionId: string) {
  expect(t.server.requests.at(-1)).toMatchObject({
    method: 'DELETE',
    path: expect.stringMatching(new RegExp(`executions/${executionId}$`)),
  })
}

describe('Stop (spec: "Stop uses DELETE .../executions/:executionId ... Recorded state determines completion.")', () => {
  it('names the running execution, goes stopping, and completes only when the record says so [R-STOP-BY-ID R-STOP-RECORD]', async () => {
    const t = setup()
    t.server.answerRead(running('e1'))
    await settle()
    const result = t.session.stop()
    await settle()
    expect(t.session.getState().status).toBe('stopping')
    expect(t.server.requests.at(-1)).toMatchObject({
      method: 'DELETE',
      path: '/rest/projects/p1/agents/v2/a1/chat/t1/executions/e1',
    })
    t.server.answerStop({ data: { cancelRequested: true } })
    expect(await result).toEqual({ cancelRequested: true })
    await settle()
    // Accepted is not ended: still stopping while the record shows it running.
    t.server.answerRead(running('e1'))
    await settle()
    expect(t.session.getState().status).toBe('stopping')
    t.push.updated('e1')
    await settle()
    t.server.answerRead(cancelled('e1'))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    expect(t.statuses()).toEqual(['recovering', 'following', 'stopping', 'idle'])
    t.session.dispose()
  })

  it('sends one request however often it is pressed [R-STOP-ONE-REQUEST]', async () => {
    const t = setup()
    t.server.answerRead(running('e1'))
    await settle()
    const calls = [t.session.stop(), t.session.stop(), t.session.stop()]
    await settle()
    expect(t.server.count('DELETE')).toBe(1)
    t.server.answerStop({ cancelRequested: true })
    expect(await Promise.all(calls)).toEqual([
      { cancelRequested: true },
      { cancelRequested: true },
      { cancelRequested: true },
    ])
    t.session.dispose()
  })

  it('cancelRequested false returns to following [R-STOP-ANSWER]', async () => {
    const t = setup()
    t.server.answerRead(running('e1'))
    await settle()
    const result = t.session.stop()
    await settle()
    t.server.answerStop({ cancelRequested: false })
    expect(await result).toEqual({ cancelRequested: false })
    expect(t.session.getState().status).toBe('following')
    t.session.dispose()
  })

  it('repeated Stops share one request, also once it was accepted and the record lags [R-STOP-ONE-REQUEST]', async () => {
    const t = setup()
    t.server.answerRead(running('e1'))
    await settle()
    const first = t.session.stop()
    const second = t.session.stop()
    await settle()
    expect(t.server.count('DELETE')).toBe(1)
    t.server.answerStop({ cancelRequested: true })
    expect(await first).toEqual({ cancelRequested: true })
    expect(await second).toEqual({ cancelRequested: true })
    // Accepted, the record not caught up yet: pressing Stop again sends nothing more.
    expect(await t.session.stop()).toEqual({ cancelRequested: true })
    await settle()
    expect(t.server.count('DELETE')).toBe(1)
    expect(t.session.getState().status).toBe('stopping')
    t.session.dispose()
  })

  it('a late Stop names the execution it was asked for, never a later one [R-STOP-LATE]', async () => {
    const t = setup()
    t.server.answerRead(running('e1'))
    await settle()
    const result = t.session.stop()
    await settle()
    // Meanwhile e1 ended and e2 started (another tab); the Stop still names e1.
    t.server.answerStop({ cancelRequested: false })
    await result
    expect(
      t.server.requests.filter((r) => r.method === 'DELETE').map((r) => r.path.split('/').at(-1)),
    ).toEqual(['e1'])
    t.session.dispose()
  })

  it('a Stop asked before execution-started is held until it arrives, then names it [R-STOP-HELD]', async () => {
    const t = setup()
    const { result } = await stopBeforeAcceptance(t)
    expect(t.session.getState().status).toBe('stopping')
    expect(t.server.count('DELETE')).toBe(0)
    const stream = t.server.openStream()
    stream.send({ type: 'execution-started', executionId: 'e7', sessionId: 't1' })
    await settle()
    expectStopOf(t, 'e7')
    t.server.answerStop({ cancelRequested: true })
    expect(await result).toEqual({ cancelRequested: true })
    t.session.dispose()
  })

  it('a Stop held for a message whose stream was cut is dropped: it never takes the execution a read names [R-STOP-HELD-DROPPED]', async () => {
    const t = setup()
    const { result } = await stopBeforeAcceptance(t)
    const stream = t.server.openStream()
    stream.close()
    // The message's turn was never announced: the Stop has nothing it may name.
    expect(await result).toEqual({ cancelRequested: false })
    await settle()
    expect(t.session.getState().status).toBe('recovering')
    // The record names an execution: this tab's message's, or another device's. It is shown
    // running; Stop pressed now names it, since the person sees it.
    t.server.answerRead(running('e3'))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'following', activeExecutionId: 'e3' })
    expect(t.server.count('DELETE')).toBe(0)
    t.session.dispose()
  })

  it('a Stop held for a message the server never took ends when the record shows nothing runs [R-STOP-HELD-DROPPED]', async () => {
    const t = setup()
    const { result } = await stopBeforeAcceptance(t)
    t.server.failPost('network-error')
    await settle()
    t.server.answerRead(empty)
    expect(await result).toEqual({ cancelRequested: false })
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', draft: 'Q' })
    expect(t.server.count('DELETE')).toBe(0)
    t.session.dispose()
  })

  it('a held Stop gives up after its bounded wait and recovers from history [R-STOP-HELD]', async () => {
    const t = setup({ stopWaitMs: 2_000 })
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Q')
    void t.session.submit()
    await settle()
    const result = t.session.stop()
    await vi.advanceTimersByTimeAsync(2_000)
    expect(await result).toEqual({ cancelRequested: false })
    expect(t.server.count('DELETE')).toBe(0)
    expect(t.session.getState().status).toBe('submitting')
    t.session.dispose()
  })

  it('cancels a suspended turn with no running execution through its run [R-STOP-SUSPENDED]', async () => {
    const t = setup()
    t.server.answerRead(
      snapshot(finishedTurn('e1', 'Pay', 'Waiting'), null, [{ toolCallId: 'c1', runId: 'run-1' }]),
    )
    await settle()
    const result = t.session.stop()
    await settle()
    expect(t.server.requests.at(-1)).toMatchObject({
      method: 'DELETE',
      path: '/rest/projects/p1/agents/v2/a1/chat/runs/run-1',
    })
    t.server.answerStop({ data: { cancelled: true } })
    expect(await result).toEqual({ cancelRequested: true })
    t.session.dispose()
  })

  it('with nothing running, sends nothing [R-STOP-NOTHING]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    expect(await t.session.stop()).toEqual({ cancelRequested: false })
    expect(t.server.count('DELETE')).toBe(0)
    t.session.dispose()
  })

  it('a failed Stop reports a typed error and keeps following [R-STOP-FAILED]', async () => {
    const t = setup()
    t.server.answerRead(running('e1'))
    await settle()
    const result = t.session.stop()
    await settle()
    t.server.answerStop({ code: 403, message: 'Missing scope agent:execute' }, 403)
    expect(await result).toMatchObject({ cancelRequested: false, error: { code: 'forbidden' } })
    expect(t.session.getState()).toMatchObject({
      status: 'following',
      error: { code: 'forbidden' },
    })
    t.session.dispose()
  })

  it('stops its own live turn: the stream ends, then the record completes it [R-STOP-OWN]', async () => {
    const t = setup()
    const { stream } = await startLiveTurn(t, 'Q', { type: 'text-delta', id: 't', delta: 'Part' })
    const result = t.session.stop()
    await settle()
    t.server.answerStop({ cancelRequested: true })
    await result
    stream.close() // the server closes the stream of a cancelled turn
    await settle()
    expect(t.session.getState().status).toBe('stopping')
    t.server.answerRead(cancelled('e1'))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle' })
    expect(t.session.getState().messages[1]).toMatchObject({ executionStatus: 'cancelled' })
    expect(t.statuses()).toEqual([
      'recovering',
      'idle',
      'submitting',
      'streaming',
      'stopping',
      'idle',
    ])
    t.session.dispose()
  })
})
