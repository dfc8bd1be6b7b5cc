/**
 * The host is an input too (issue 27, rows b–f): every TanStack cache event an app can cause, a
 * listener of the app's that throws, a read that answers after the world moved on, a resumed turn
 * that fails, `dispose()` with a read in flight. Each arrives in the reducer as an action; each
 * case is a sequence of states and requests, not only the last.
 */
import { QueryClient } from '@tanstack/query-core'
import { describe, expect, it, vi } from 'vitest'
import type { HistorySnapshot, Message } from '../index'
import {
  assistantMessage,
  finishedTurn,
  runningTurn,
  settle,
  setup,
  snapshot,
  useFakeTimersInEachTest,
  userMessage,
} from './harness'

useFakeTimersInEachTest()

type T = ReturnType<typeof setup>
const inFlight = (t: T) => t.session.getEngineState().reads.inFlight
const queryKey = (t: T) => t.client.queryKey(t.session.key)

/** Answers every read the scripted server holds (aborted ones included) until none is left. */
async function answerAll(t: T, answer: HistorySnapshot) {
  for (let round = 0; round < 10 && t.server.pendingReads() > 0; round++) {
    while (t.server.pendingReads() > 0) t.server.answerRead(answer)
    await settle()
  }
}

/** A session whose first read answered `first`, with a second read (a notification's) in flight. */
async function readInFlight(first: HistorySnapshot = snapshot(finishedTurn('e1', 'Q', 'A'))) {
  const t = setup()
  t.server.answerRead(first)
  await settle()
  t.push.updated('e1')
  await settle()
  expect(t.server.pendingReads()).toBe(1)
  expect(inFlight(t)).toBe(true)
  return t
}

describe('every cache event an app can cause is an engine input [R-READ-QUERY-EVENTS]', () => {
  it.each([
    ['removeQueries', (t: T) => t.client.queryClient.removeQueries({ queryKey: queryKey(t) })],
    ['clear (a sign-out)', (t: T) => t.client.queryClient.clear()],
  ])(
    '%s while a read is in flight ends that read: refresh() resolves and the next read runs',
    async (_name, remove) => {
      const t = await readInFlight()
      remove(t)
      await settle()
      expect(inFlight(t)).toBe(false)
      // The transcript shown stays (the engine holds the record it applied).
      expect(t.session.getState().messages).toHaveLength(2)
      // A notification after it reads again, through a rebuilt query.
      t.push.updated('e1')
      await settle()
      expect(inFlight(t)).toBe(true)
      const refreshed = vi.fn()
      void t.session.refresh().then(refreshed)
      // The scripted server still lists the aborted request: answering it changes nothing.
      await answerAll(t, snapshot(finishedTurn('e1', 'Q', 'A, recorded again')))
      expect(t.session.getState().messages[1]?.content).toEqual([
        { type: 'text', text: 'A, recorded again' },
      ])
      expect(refreshed).toHaveBeenCalledOnce()
      // And the app's setQueryData reaches the session through the rebuilt query.
      t.client.queryClient.setQueryData(queryKey(t), snapshot(finishedTurn('e1', 'Q', 'Set')))
      await settle()
      expect(t.session.getState().messages[1]?.content).toEqual([{ type: 'text', text: 'Set' }])
      t.session.dispose()
    },
  )

  it('resetQueries while a read is in flight: TanStack reads again, and that read is the one shown', async () => {
    const t = await readInFlight()
    void t.client.queryClient.resetQueries({ queryKey: queryKey(t) })
    await settle()
    expect(inFlight(t)).toBe(true)
    const refreshed = vi.fn()
    void t.session.refresh().then(refreshed)
    // The aborted read's request, then the reset's.
    await answerAll(t, snapshot(finishedTurn('e1', 'Q', 'After the reset')))
    expect(inFlight(t)).toBe(false)
    expect(refreshed).toHaveBeenCalledOnce()
    expect(t.session.getState().messages[1]?.content).toEqual([
      { type: 'text', text: 'After the reset' },
    ])
    t.session.dispose()
  })

  it('cancelQueries ends the read without an error; refresh() resolves; nothing is retried for it', async () => {
    const t = await readInFlight()
    const refreshed = vi.fn()
    void t.session.refresh().then(refreshed)
    await settle()
    void t.client.queryClient.cancelQueries({ queryKey: queryKey(t) })
    await settle()
    // The refresh's read started after the cancelled one; a cancellation is no readError.
    expect(t.session.getState().readError).toBeNull()
    await answerAll(t, snapshot(finishedTurn('e1', 'Q', 'A')))
    expect(refreshed).toHaveBeenCalledOnce()
    expect(inFlight(t)).toBe(false)
    const reads = t.server.count('GET')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(t.server.count('GET')).toBe(reads)
    t.session.dispose()
  })

  it('invalidateQueries while a read is in flight replaces it: one read shown, no stale answer', async () => {
    const t = await readInFlight()
    void t.client.queryClient.invalidateQueries({ queryKey: queryKey(t) })
    await settle()
    expect(t.server.count('GET')).toBe(3)
    expect(inFlight(t)).toBe(true)
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'Aborted one')))
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'The replacing one')))
    await settle()
    expect(inFlight(t)).toBe(false)
    expect(t.session.getState().messages[1]?.content).toEqual([
      { type: 'text', text: 'The replacing one' },
    ])
    t.session.dispose()
  })

  it('setQueryData while a read is in flight shows at once; that read, older, does not replace it; the next does', async () => {
    const t = await readInFlight()
    t.client.queryClient.setQueryData(queryKey(t), snapshot(finishedTurn('e1', 'Q', 'Set')))
    await settle()
    expect(t.session.getState().messages[1]?.content).toEqual([{ type: 'text', text: 'Set' }])
    expect(inFlight(t)).toBe(true)
    // Found by the model: the read began before the app's record, so its answer is older.
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'Read before')))
    await settle()
    expect(t.session.getState().messages[1]?.content).toEqual([{ type: 'text', text: 'Set' }])
    // The next read, of its own, is the record.
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'Read after')))
    await settle()
    expect(t.session.getState().messages[1]?.content).toEqual([
      { type: 'text', text: 'Read after' },
    ])
    t.session.dispose()
  })

  it('a 404 of a read on its way when the app set a record does not forget that record (found by the model)', async () => {
    const t = setup()
    expect(inFlight(t)).toBe(true)
    t.client.queryClient.setQueryData(queryKey(t), snapshot(finishedTurn('e1', 'Q', 'Set')))
    await settle()
    t.server.answerRead({ status: 404 })
    await settle()
    expect(t.session.getState()).toMatchObject({ notFound: false })
    expect(t.session.getState().messages).toHaveLength(2)
    t.session.dispose()
  })

  it('gcTime 0: the query collected while nobody listened is rebuilt when the session is followed again', async () => {
    const queryClient = new QueryClient({ defaultOptions: { queries: { gcTime: 0 } } })
    const t = setup({ queryClient, lingerMs: 0 })
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    t.unsubscribe()
    await vi.advanceTimersByTimeAsync(10)
    expect(queryClient.getQueryCache().find({ queryKey: queryKey(t) })).toBeUndefined()
    const again = t.client.session(t.session.key)
    const states: string[] = []
    const stop = again.subscribe((state) => states.push(state.status))
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A again')))
    await settle()
    expect(again.getState()).toMatchObject({ status: 'idle', loaded: true })
    queryClient.setQueryData(queryKey(t), snapshot(finishedTurn('e1', 'Q', 'Set')))
    await settle()
    expect(again.getState().messages[1]?.content).toEqual([{ type: 'text', text: 'Set' }])
    stop()
    again.dispose()
  })
})

describe('a listener of the app that throws loses nothing [R-HOST-LISTENER-THROWS]', () => {
  it('a state subscriber that throws once during submit(): the POST is sent, submit() is accepted, one warning', async () => {
    const warnings: string[] = []
    const t = setup({ onWarning: (message) => warnings.push(message) })
    t.server.answerRead(snapshot([]))
    await settle()
    let thrown = 0
    const seen: string[] = []
    t.session.subscribe((state) => {
      seen.push(state.status)
      if (state.status === 'submitting' && thrown++ === 0) throw new Error('analytics down')
    })
    const result = t.session.submit('Hello')
    await settle()
    expect(t.server.count('POST')).toBe(1)
    t.server.openStream().send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
    await settle()
    await expect(result).resolves.toEqual({ outcome: 'accepted', executionId: 'e1' })
    expect(seen).toEqual(['submitting', 'streaming'])
    // The other listener (the harness's) heard every state too.
    expect(t.statuses()).toEqual(['recovering', 'idle', 'submitting', 'streaming'])
    expect(warnings).toEqual([expect.stringContaining('A state listener threw: analytics down')])
    t.session.dispose()
  })
})

describe('an answered suspension [R-SUSPENSION-ANSWERED]', () => {
  const suspended = (): HistorySnapshot => ({
    messages: [
      userMessage('e1', 'Send the report'),
      assistantMessage('e1', [
        {
          type: 'tool-call',
          toolCallId: 'tc1',
          toolName: 'send',
          input: {},
          suspendPayload: { runId: 'r1', question: 'Send?' },
        },
      ] as Message['content']),
    ],
    openSuspensions: [{ toolCallId: 'tc1', runId: 'r1', suspendPayload: { question: 'Send?' } }],
    activeExecutionId: null,
  })

  it('a read that started before the resume was taken cannot reopen what it answered', async () => {
    const t = setup()
    t.server.answerRead(suspended())
    await settle()
    expect(t.session.getState().openSuspensions).toHaveLength(1)
    // A read starts (the page came back into view), then the person approves.
    void t.session.refresh()
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    void t.session.resume({ runId: 'r1', toolCallId: 'tc1' }, { approved: true })
    await settle()
    const stream = t.server.openStream()
    stream.send({ type: 'execution-started', executionId: 'e2', sessionId: 't1' })
    await settle()
    expect(t.session.getState().openSuspensions).toEqual([])
    // The read from before answers with the record as it was: the suspension stays answered.
    t.server.answerRead(suspended())
    await settle()
    expect(t.session.getState().openSuspensions).toEqual([])
    expect(t.session.getState().status).toBe('streaming')
    await expect(t.session.resume({ runId: 'r1', toolCallId: 'tc1' }, {})).resolves.toEqual({
      outcome: 'busy',
    })
    t.session.dispose()
  })

  it.each(['an error event', 'a cut stream'] as const)(
    'a resumed turn that fails with %s before any record took the answer: the suspension is answerable again',
    async (failure) => {
      const t = setup()
      t.server.answerRead(suspended())
      await settle()
      void t.session.resume({ runId: 'r1', toolCallId: 'tc1' }, { approved: true })
      await settle()
      const stream = t.server.openStream()
      stream.send({ type: 'execution-started', executionId: 'e2', sessionId: 't1' })
      await settle()
      expect(t.session.getState().openSuspensions).toEqual([])
      if (failure === 'an error event') {
        stream.send({ type: 'error', message: 'The tool failed' })
        stream.close()
      } else stream.fail()
      await settle()
      // The reads after it fail: the approval card stays, so the person can try again.
      while (t.server.pendingReads() > 0) t.server.answerRead('network-error')
      await settle()
      expect(t.session.getState().openSuspensions.map((s) => s.toolCallId)).toEqual(['tc1'])
      t.session.dispose()
    },
  )

  it('issue 35, row e: Decline, the resumed turn starts, Stop; the cancel cuts the stream, reads fail: the card stays closed [R-SUSPENSION-REOPEN]', async () => {
    const t = setup()
    t.server.answerRead(suspended())
    await settle()
    const seen: [string, string[]][] = []
    const unsubscribe = t.session.subscribe((state) => {
      const shown: [string, string[]] = [
        state.status,
        state.openSuspensions.map((s) => s.toolCallId),
      ]
      if (JSON.stringify(seen.at(-1)) !== JSON.stringify(shown)) seen.push(shown)
    })
    void t.session.resume({ runId: 'r1', toolCallId: 'tc1' }, { approved: false })
    await settle()
    const stream = t.server.openStream()
    stream.send({ type: 'execution-started', executionId: 'e2', sessionId: 't1' })
    await settle()
    void t.session.stop()
    await settle()
    t.server.answerStop({ data: { cancelRequested: true } })
    await settle()
    // The server's cancel cuts the stream; the reads after it fail.
    stream.fail()
    await settle()
    for (let i = 0; i < 3; i++) {
      while (t.server.pendingReads() > 0) t.server.answerRead('network-error')
      await vi.advanceTimersByTimeAsync(1_000)
      await settle()
    }
    // Every state from the answer's acceptance on: the card closed in each.
    const taken = seen.findIndex(([status]) => status === 'streaming')
    expect(seen.slice(0, taken)).toEqual([['submitting', ['tc1']]])
    expect(seen.slice(taken).filter(([, cards]) => cards.includes('tc1'))).toEqual([])
    expect(seen.map(([status]) => status)).toEqual(
      expect.arrayContaining(['submitting', 'streaming', 'stopping']),
    )
    expect(t.session.getState().openSuspensions).toEqual([])
    unsubscribe()
    t.session.dispose()
  })
})

describe('after dispose() no request starts [R-LIFECYCLE-DISPOSE]', () => {
  it('dispose() while a read is in flight and a refresh is wanted: no further request, no answer applied', async () => {
    const t = await readInFlight(runningTurn())
    const refreshed = vi.fn()
    void t.session.refresh().then(refreshed)
    t.push.updated('e1')
    const before = t.server.requests.length
    t.session.dispose()
    const state = t.session.getState()
    await settle()
    // The read's answer arrives all the same (the server had sent it): it is not applied, and the
    // refresh it would have been followed by is not sent.
    t.server.answerRead(snapshot(finishedTurn('e2', 'Q2', 'A2')))
    await settle()
    await vi.advanceTimersByTimeAsync(120_000)
    expect(t.server.requests.length).toBe(before)
    expect(t.session.getState()).toBe(state)
    expect(refreshed).toHaveBeenCalledOnce()
    // The app refetching the query (its own call) reaches no disposed session.
    void t.client.queryClient.invalidateQueries({ queryKey: queryKey(t) })
    t.client.queryClient.setQueryData(queryKey(t), snapshot(finishedTurn('e9', 'X', 'Y')))
    await settle()
    expect(t.session.getState()).toBe(state)
  })
})
