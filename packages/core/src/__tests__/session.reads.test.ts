import { describe, expect, it, vi } from 'vitest'
import {
  empty,
  finishedTurn,
  settle,
  setup,
  snapshot,
  startLiveTurn,
  runningTurn,
  useFakeTimersInEachTest,
} from './harness'

useFakeTimersInEachTest()

const running = (text: string) => runningTurn({ text })

describe('reads (spec: "Each successful read replaces the recovered transcript. A failed read keeps the last known state.") [R-READ-REPLACES R-READ-KEEPS]', () => {
  it('replaces the transcript, openSuspensions and activeExecutionId on each good read', async () => {
    const t = setup()
    t.server.answerRead(running('A'))
    await settle()
    expect(t.session.getState()).toMatchObject({
      status: 'following',
      activeExecutionId: 'e1',
      readError: null,
    })
    t.push.updated('e1')
    await settle()
    const suspended = snapshot(finishedTurn('e1', 'Q', 'AB'), null, [
      { toolCallId: 'c', runId: 'r' },
    ])
    t.server.answerRead(suspended)
    await settle()
    expect(t.session.getState()).toMatchObject({
      status: 'idle',
      activeExecutionId: null,
      messages: suspended.messages,
      openSuspensions: suspended.openSuspensions,
      lastSyncedAt: Date.parse('2026-11-30T10:00:00.000Z'),
    })
    t.session.dispose()
  })

  it.each([
    ['a network error', 'network-error' as const, 'network_error'],
    ['HTTP 500', { status: 500 }, 'server_error'],
    ['HTTP 503 with an HTML body', { status: 503, body: '<html>' }, 'server_error'],
    ['invalid JSON', '{"messages": [', 'invalid_response'],
    ['a body that fails validation', JSON.stringify({ messages: 'nope' }), 'invalid_response'],
  ])(
    'keeps the last known state on %s, sets readError, and retries while a turn runs',
    async (_, failure, code) => {
      const t = setup()
      t.server.answerRead(running('Known'))
      await settle()
      const known = t.session.getState().messages
      t.push.updated('e1')
      await settle()
      t.server.answerRead(failure)
      await settle()
      expect(t.session.getState()).toMatchObject({
        status: 'following',
        messages: known,
        readError: { code },
      })
      expect(t.session.getState().messages).toBe(known)
      // Bounded backoff: the retry comes on its own, within the first backoff ceiling.
      expect(t.server.pendingReads()).toBe(0)
      await vi.advanceTimersByTimeAsync(500)
      await settle()
      expect(t.server.pendingReads()).toBe(1)
      t.server.answerRead(running('Known and more'))
      await settle()
      expect(t.session.getState()).toMatchObject({ readError: null })
      expect(t.session.getState().messages[1]?.content).toEqual([
        { type: 'text', text: 'Known and more' },
      ])
      t.session.dispose()
    },
  )

  it('times out a read that never answers, and retries [R-READ-BACKOFF]', async () => {
    const t = setup({ requestTimeoutMs: 1_000 })
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    await vi.advanceTimersByTimeAsync(1_000)
    await settle()
    expect(t.session.getState().readError).toMatchObject({ code: 'timeout' })
    await vi.advanceTimersByTimeAsync(500)
    await settle()
    expect(t.server.count('GET')).toBe(2)
    t.session.dispose()
  })

  it('backs off further on each failure, up to the bound [R-READ-BACKOFF]', async () => {
    const t = setup({ retry: { baseMs: 100, maxMs: 400 } })
    const gaps: number[] = []
    for (let i = 0; i < 5; i++) {
      await settle()
      t.server.answerRead({ status: 500 })
      await settle()
      let waited = 0
      while (t.server.pendingReads() === 0 && waited < 1_000) {
        await vi.advanceTimersByTimeAsync(10)
        waited += 10
      }
      gaps.push(waited)
    }
    // Attempt n waits between half and all of min(400, 100 * 2^n).
    expect(gaps[0]).toBeLessThanOrEqual(100)
    expect(gaps[2]).toBeGreaterThanOrEqual(200)
    expect(gaps.every((gap) => gap <= 400)).toBe(true)
    expect(t.server.count('GET')).toBe(6)
    t.session.dispose()
  })

  it('retries a failed read a few times even when nothing runs, so a passing fault heals [R-READ-BACKOFF]', async () => {
    const t = setup({ retry: { baseMs: 100, maxMs: 100 } })
    t.server.answerRead(empty)
    await settle()
    void t.session.refresh()
    await settle()
    t.server.answerRead({ status: 500 })
    await settle()
    expect(t.session.getState()).toMatchObject({
      status: 'idle',
      readError: { code: 'server_error' },
    })
    await vi.advanceTimersByTimeAsync(100)
    t.server.answerRead(empty)
    await settle()
    expect(t.session.getState().readError).toBeNull()
    t.session.dispose()
  })

  it('gives up after three idle retries: no endless reads for a thread where nothing runs [R-READ-BACKOFF]', async () => {
    const t = setup({ retry: { baseMs: 100, maxMs: 100 } })
    t.server.answerRead(empty)
    await settle()
    void t.session.refresh()
    for (let i = 0; i < 4; i++) {
      await settle()
      t.server.answerRead({ status: 500 })
      await settle()
      await vi.advanceTimersByTimeAsync(100)
    }
    await vi.advanceTimersByTimeAsync(60_000)
    expect(t.server.count('GET')).toBe(5) // the first read, the failed one and its three retries
    expect(t.session.getState().readError).toMatchObject({ code: 'server_error' })
    t.session.dispose()
  })

  it('404 says the thread is not readable, with no transcript and no retry storm [R-READ-404]', async () => {
    const t = setup()
    t.server.answerRead({ status: 404, body: { code: 404, message: 'Not found' } })
    await settle()
    expect(t.session.getState()).toMatchObject({
      notFound: true,
      status: 'idle',
      messages: [],
      // An answer, not a failure: no status line says "cannot read" [R-READ-404-NO-ERROR].
      readError: null,
    })
    await vi.advanceTimersByTimeAsync(60_000)
    expect(t.server.count('GET')).toBe(1)
    t.session.dispose()
  })
})

describe('ordering', () => {
  it('keeps at most one read in flight and one queued: a burst of 100 notifications makes two reads [R-READ-COALESCE R-READ-BATCHES]', async () => {
    const t = setup()
    t.server.answerRead(running('A'))
    await settle()
    for (let i = 0; i < 100; i++) t.push.updated('e1')
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(running('AB'))
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(running('ABC'))
    await settle()
    expect(t.server.count('GET')).toBe(3) // the first read, then one in flight and one trailing
    t.session.dispose()
  })

  it('spaces reads at least minReadIntervalMs apart: a burst against a fast server still makes two [R-READ-COALESCE]', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    const t = setup({ minReadIntervalMs: 250 })
    t.server.answerRead(running('A'))
    await settle()
    t.push.connection(true) // no polling: only notifications make reads here
    await vi.advanceTimersByTimeAsync(250)
    t.server.answerRead(running('A')) // the read of what the channel may have missed
    await vi.advanceTimersByTimeAsync(1_000)
    for (let i = 0; i < 10; i++) {
      t.push.updated('e1') // one notification every 10 ms, each read answered at once
      await settle()
      if (t.server.pendingReads() > 0) t.server.answerRead(running('A'))
      await vi.advanceTimersByTimeAsync(10)
    }
    expect(t.server.count('GET')).toBe(3) // the first read, the connect's, and the burst's first
    await vi.advanceTimersByTimeAsync(250)
    await settle()
    expect(t.server.count('GET')).toBe(4) // and one trailing read for the rest of the burst
    t.server.answerRead(running('AB'))
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    expect(t.server.count('GET')).toBe(4)
    t.session.dispose()
  })

  it('defers reads while its own live stream is open, then reads once [R-READ-DEFER-OWN]', async () => {
    const t = setup()
    const { stream } = await startLiveTurn(t)
    for (let i = 0; i < 10; i++) t.push.updated('e1')
    void t.session.refresh()
    await settle()
    expect(t.server.count('GET')).toBe(1)
    stream.send({ type: 'done' })
    stream.close()
    await settle()
    expect(t.server.count('GET')).toBe(2)
    t.session.dispose()
  })

  it('never lets a lagging snapshot shrink what this tab already showed [R-READ-NEVER-SHRINKS]', async () => {
    const t = setup()
    const { stream } = await startLiveTurn(t, 'Q', { type: 'text-delta', id: 't', delta: 'ABCDEF' })
    stream.close() // cut
    await settle()
    t.server.answerRead(running('ABC')) // an older batch
    await settle()
    expect(t.session.getState().messages[1]?.content).toEqual([{ type: 'text', text: 'ABCDEF' }])
    t.push.updated('e1')
    await settle()
    t.server.answerRead(running('ABCDEFGH'))
    await settle()
    expect(t.session.getState().messages[1]?.content).toEqual([{ type: 'text', text: 'ABCDEFGH' }])
    t.session.dispose()
  })

  it('a disposed session (thread switch) ignores late answers [R-LIFECYCLE-THREAD-SWITCH]', async () => {
    const t = setup()
    await settle()
    const before = t.session.getState()
    t.session.dispose()
    t.server.answerRead(running('Late'))
    await settle()
    expect(t.session.getState()).toBe(before)
  })
})

describe('following (spec: "It follows later agentExecutionUpdated notifications with fresh history reads") [R-READ-ON-PUSH]', () => {
  it('reads on a notification for this thread only', async () => {
    const t = setup()
    t.server.answerRead(running('A'))
    await settle()
    t.push.updated('e9', 'another-thread')
    await settle()
    expect(t.server.pendingReads()).toBe(0)
    t.push.updated('e1')
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.session.dispose()
  })

  it('reads when the push channel connects after a read, and when it reconnects [R-READ-SIGNALS]', async () => {
    const t = setup()
    t.server.answerRead(running('A'))
    await settle()
    // What was recorded between the mount's read and the channel opening was announced to nobody.
    t.push.connection(true)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(running('AB'))
    await settle()
    t.push.connection(false)
    t.push.connection(true)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.session.dispose()
  })

  it('a channel that connects while the first read is in flight costs one read behind it (coalesced) [R-READ-SIGNALS R-READ-COALESCE]', async () => {
    const t = setup()
    t.push.connection(true)
    t.push.connection(false)
    t.push.connection(true)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(running('A'))
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(running('A'))
    await settle()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(t.server.count('GET')).toBe(2)
    t.session.dispose()
  })

  it('reads when the page becomes visible or the browser comes back online [R-READ-SIGNALS]', async () => {
    let resume: () => void = () => {}
    const t = setup({ resumeSignal: (callback) => ((resume = callback), () => {}) })
    t.server.answerRead(running('A'))
    await settle()
    resume()
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.session.dispose()
  })

  it('polls with backoff while a turn runs and no push channel is connected, and stops once it ended [R-READ-POLL]', async () => {
    const t = setup({ push: false, poll: { baseMs: 1_000, maxMs: 4_000 } })
    t.server.answerRead(running('A'))
    await settle()
    await vi.advanceTimersByTimeAsync(1_000)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(running('AB'))
    await settle()
    await vi.advanceTimersByTimeAsync(2_000)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(snapshot(finishedTurn('e1', 'Q', 'ABC')))
    await settle()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(t.server.count('GET')).toBe(3)
    expect(t.session.getState().status).toBe('idle')
    t.session.dispose()
  })

  it('does not poll while push is connected [R-READ-POLL]', async () => {
    const t = setup()
    t.server.answerRead(running('A'))
    await settle()
    t.push.connection(true)
    await settle()
    t.server.answerRead(running('A'))
    await settle()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(t.server.count('GET')).toBe(2)
    t.session.dispose()
  })
})

describe('lifecycle', () => {
  it('leaves no timer, listener or stream behind after dispose [R-LIFECYCLE-DISPOSE]', async () => {
    const t = setup()
    t.server.answerRead(running('A'))
    await settle()
    t.unsubscribe()
    t.session.dispose()
    expect(t.push.listeners()).toBe(1) // the client's push channel lingers a moment for reuse…
    await vi.advanceTimersByTimeAsync(1_000)
    expect(t.push.listeners()).toBe(0) // …then closes
    expect(vi.getTimerCount()).toBe(0)
  })

  it('after dispose, the client gives a fresh session for the thread [R-LIFECYCLE-DISPOSE]', () => {
    const t = setup()
    t.session.dispose()
    const next = t.client.session({ projectId: 'p1', agentId: 'a1', threadId: 't1' })
    expect(next).not.toBe(t.session)
    expect(t.client.session({ projectId: 'p1', agentId: 'a1', threadId: 't1' })).toBe(next)
    next.dispose()
  })

  it('goes quiet after its last subscriber leaves, and reads again on return [R-LIFECYCLE-QUIET]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.unsubscribe()
    await vi.advanceTimersByTimeAsync(2_000) // the session's linger, then the push channel's
    expect(t.push.listeners()).toBe(0)
    const again = t.session.subscribe(() => {})
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    expect(t.session.getState().status).toBe('recovering')
    again()
    t.session.dispose()
  })

  it('a resubscription within the linger (StrictMode) neither reads nor reconnects again [R-LIFECYCLE-QUIET]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.unsubscribe()
    const again = t.session.subscribe(() => {})
    await vi.advanceTimersByTimeAsync(5_000)
    expect(t.server.count('GET')).toBe(1)
    expect(t.push.subscriptions()).toBe(1)
    again()
    t.session.dispose()
  })
})

describe('a wrong URL is not a missing thread (issue 14) [R-READ-WRONG-URL]', () => {
  it.each([
    ['an HTML page', { status: 404, body: '<!DOCTYPE html><pre>Cannot GET /x</pre>' }],
    [
      "the reference server's route_not_found",
      { status: 404, body: { code: 'route_not_found', message: 'No route GET /x.' } },
    ],
  ])('%s is a readError with routeMissing, not notFound', async (_, answer) => {
    const t = setup()
    t.server.answerRead(
      typeof answer.body === 'string'
        ? new Response(answer.body, { status: 404, headers: { 'content-type': 'text/html' } })
        : answer,
    )
    await settle()
    expect(t.session.getState()).toMatchObject({
      notFound: false,
      readError: { code: 'not_found', routeMissing: true },
    })
    t.session.dispose()
  })

  it('a request that gets no answer says to check the URL and CORS', async () => {
    const t = setup({ baseUrl: 'https://api.example.com/rest' })
    t.server.answerRead('network-error')
    await settle()
    expect(t.session.getState().readError?.message).toMatch(
      /baseUrl \(https:\/\/api\.example\.com\/rest\).*CORS/,
    )
    t.session.dispose()
  })
})
