/**
 * The faults an adversary found in the first engine (issue 11), one describe per rule, named by
 * what a person meets. Every test walks the scenario step by step and asserts the states on the
 * way. (The second adversary's rules are in session.adversary.test.ts.)
 */
import { describe, expect, it, vi } from 'vitest'
import { createPreviewChatClient, websocketPushSource, type WebSocketLike } from '../index'
import { webSocketWorld } from './world/webSocket'
import {
  assistantMessage,
  empty,
  finishedTurn,
  key,
  runningTurn,
  settle,
  setup,
  snapshot,
  startLiveTurn,
  userMessage,
  useFakeTimersInEachTest,
} from './harness'

useFakeTimersInEachTest()

const ids = (t: ReturnType<typeof setup>) => t.session.getState().messages.map((m) => m.id)

describe('a finished turn never vanishes while the next one runs [R-RECOVER-NEVER-VANISHES]', () => {
  it('keeps the previous question and answer on screen until a read covers them', async () => {
    const t = setup()
    const { stream } = await startLiveTurn(
      t,
      'First',
      { type: 'text-delta', id: 'x', delta: 'Quick answer' },
      { type: 'done', executionId: 'e1' },
    )
    // The read that would record e1 is in flight; the person sends again at once.
    expect(t.server.pendingReads()).toBe(1)
    expect(t.session.getState().status).toBe('idle')
    // The turn is over; its stream is read until the server closes it (never cancelled).
    expect(stream.cancelled).toBe(false)
    stream.close()
    t.session.setDraft('Second')
    const second = t.session.submit()
    await settle()
    const from = t.states.length
    t.server
      .openStream()
      .send(
        { type: 'execution-started', executionId: 'e2', sessionId: key.threadId },
        { type: 'text-delta', id: 'y', delta: 'Another' },
      )
    await settle()
    expect(await second).toEqual({ outcome: 'accepted', executionId: 'e2' })
    expect(ids(t)).toEqual(['e1:user', 'e1:assistant', 'e2:user', 'e2:assistant'])
    // Through every state of the second turn, the first one stays.
    for (const state of t.states.slice(from))
      expect(state.messages.map((m) => m.id).slice(0, 2)).toEqual(['e1:user', 'e1:assistant'])
    // The record catches up: the first turn now comes from it, in the same place.
    t.server.answerRead(snapshot(finishedTurn('e1', 'First', 'Quick answer')))
    await settle()
    expect(ids(t)).toEqual(['e1:user', 'e1:assistant', 'e2:user', 'e2:assistant'])
    expect(t.session.getEngineState().settled).toEqual([])
    t.session.dispose()
  })
})

describe('a POST that the server never confirms [R-POST-TIMEOUT]', () => {
  it('waits submitTimeoutMs, then recovers with a timeout error, the draft kept and the POST left open [R-N8N-NO-CLOSE]', async () => {
    const t = setup({ submitTimeoutMs: 30_000 })
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Hello?')
    const result = t.session.submit()
    await settle()
    expect(t.session.getState().status).toBe('submitting')
    await vi.advanceTimersByTimeAsync(29_999)
    expect(t.session.getState().status).toBe('submitting')
    await vi.advanceTimersByTimeAsync(1)
    await settle()
    expect(await result).toMatchObject({ outcome: 'failed', error: { code: 'timeout' } })
    expect(t.session.getState()).toMatchObject({
      status: 'recovering',
      draft: 'Hello?',
      error: { code: 'timeout' },
    })
    // Closing the POST could cancel the turn on some servers: it stays open.
    expect(t.server.postSignals()[0]?.aborted).toBe(false)
    // The record says nothing runs: the gate opens again.
    t.server.answerRead(empty)
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', canSubmit: true })
    expect(t.statuses()).toEqual(['recovering', 'idle', 'submitting', 'recovering', 'idle'])
    t.session.dispose()
  })

  it('a stream that opens but never says execution-started recovers the same way', async () => {
    const t = setup({ submitTimeoutMs: 5_000 })
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Hello?')
    const result = t.session.submit()
    await settle()
    const stream = t.server.openStream()
    stream.raw(':ok\n\n')
    await vi.advanceTimersByTimeAsync(5_000)
    await settle()
    expect(await result).toMatchObject({ outcome: 'failed', error: { code: 'timeout' } })
    // The record shows the server took it after all: the tab follows it.
    t.server.answerRead(runningTurn({ question: 'Hello?' }))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'following', draft: 'Hello?' })
    expect(stream.cancelled).toBe(false)
    t.session.dispose()
  })
})

describe('an accepted Stop while the own stream is silent [R-READ-DEFER-OWN]', () => {
  it('reads on notifications and completes from the record', async () => {
    const t = setup()
    await startLiveTurn(t, 'Q', { type: 'text-delta', id: 'x', delta: 'Part' })
    const stopped = t.session.stop()
    await settle()
    t.server.answerStop({ cancelRequested: true })
    expect(await stopped).toEqual({ cancelRequested: true })
    // The stream stays silent; the server's notifications keep coming.
    t.push.updated('e1')
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(
      snapshot(
        [
          userMessage('e1', 'Q', 'cancelled'),
          assistantMessage('e1', [{ type: 'text', text: 'Part' }], 'cancelled'),
        ],
        null,
      ),
    )
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    expect(t.session.getState().messages[1]?.executionStatus).toBe('cancelled')
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

  it('without a Stop, a stream silent for streamSilenceMs no longer holds the reads back', async () => {
    const t = setup({ streamSilenceMs: 5_000 })
    await startLiveTurn(t, 'Q', { type: 'text-delta', id: 'x', delta: 'Part' })
    t.push.updated('e1')
    await settle()
    expect(t.server.pendingReads()).toBe(0)
    await vi.advanceTimersByTimeAsync(5_000)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.session.dispose()
  })
})

describe('a push channel that connects and drops every 100 ms [R-PUSH-FLAPPING]', () => {
  // Opens at once, and a proxy drops it 100 ms later (error, then close 1006).
  const flaky = () =>
    webSocketWorld({
      handshake: 'open',
      latencyMs: 0,
      onSocket: (socket) => void setTimeout(() => socket.drop(), 100),
    })

  it('costs ten open threads a few reads per backoff window, not one per reconnect', async () => {
    const world = flaky()
    let reads = 0
    const client = createPreviewChatClient({
      fetch: async () => {
        reads++
        return Response.json({ data: runningTurn() })
      },
      push: websocketPushSource({
        url: 'ws://x/rest/push',
        WebSocket: world.WebSocket as unknown as WebSocketLike,
        // Jitter at its middle: the counts below are exact, not a matter of luck (with
        // Math.random, 11 connections came up about once in 20 runs).
        random: () => 0.5,
      }),
      random: () => 0.5,
      storage: null,
      relay: false,
      resumeSignal: () => () => {},
    })
    const stops = Array.from({ length: 10 }, (_, i) =>
      client.session({ ...key, threadId: `t${i}` }).subscribe(() => {}),
    )
    await vi.advanceTimersByTimeAsync(60_000)
    const connections = world.sockets.length
    // The first minute of backoff (0.5 s doubling to 15 s) allows about ten connections.
    expect(connections).toBeLessThanOrEqual(10)
    // Each thread: its first read, one per reconnect, and the polls while the channel is down.
    expect(reads).toBeLessThanOrEqual(10 * (1 + connections + 8))
    stops.forEach((stop) => stop())
  })
})

/** No read starts until `ms` from now, and one starts then. */
async function expectReadAfter(t: ReturnType<typeof setup>, ms: number) {
  await vi.advanceTimersByTimeAsync(ms - 1)
  expect(t.server.pendingReads()).toBe(0)
  await vi.advanceTimersByTimeAsync(1)
  await settle()
  expect(t.server.pendingReads()).toBe(1)
}

describe('Retry-After', () => {
  it('is honoured for reads (seconds), capped by the longest backoff [R-READ-RETRY-AFTER]', async () => {
    const t = setup({ retry: { baseMs: 500, maxMs: 15_000 } })
    t.server.answerRead(runningTurn())
    await settle()
    t.push.updated('e1')
    await settle()
    t.server.answerRead({ status: 429, headers: { 'retry-after': '120' } })
    await settle()
    expect(t.session.getState().readError).toMatchObject({ code: 'http_error', status: 429 })
    await expectReadAfter(t, 15_000)
    t.session.dispose()
  })

  // An HTTP date is counted from the response's own `Date`: the server's clock, not this one's.
  it.each([
    ['on time', 0],
    ['an hour fast', 3_600_000],
    ['an hour slow', -3_600_000],
  ])(
    "is honoured for reads (an HTTP date), with this machine's clock %s [R-READ-RETRY-AFTER]",
    async (_, skewMs) => {
      const t = setup()
      t.server.answerRead(runningTurn())
      await settle()
      t.push.updated('e1')
      await settle()
      const serverNow = Date.now() - skewMs
      t.server.answerRead({
        status: 503,
        headers: {
          date: new Date(serverNow).toUTCString(),
          'retry-after': new Date(serverNow + 4_000).toUTCString(),
        },
      })
      await settle()
      await expectReadAfter(t, 4_000)
      t.session.dispose()
    },
  )

  it('falls back to its own backoff for an HTTP date without a Date header [R-READ-RETRY-AFTER]', async () => {
    const t = setup()
    t.server.answerRead(runningTurn())
    await settle()
    t.push.updated('e1')
    await settle()
    const inAnHour = new Date(Date.now() + 3_600_000).toUTCString()
    t.server.answerRead({ status: 503, headers: { 'retry-after': inAnHour } })
    await settle()
    // The first retry's backoff (`retry.baseMs`, 500 ms here), not the 15 s cap of a long wait.
    await vi.advanceTimersByTimeAsync(1_000)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.session.dispose()
  })

  it('is honoured for Stop: the same execution is asked again after the wait [R-STOP-RETRY-AFTER]', async () => {
    const t = setup()
    t.server.answerRead(runningTurn())
    await settle()
    const stopped = t.session.stop()
    await settle()
    t.server.answerStop({ code: 429, message: 'slow down' }, 429, { 'retry-after': '2' })
    await settle()
    expect(t.server.count('DELETE')).toBe(1)
    await vi.advanceTimersByTimeAsync(2_000)
    await settle()
    expect(t.server.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([
      expect.stringMatching(/executions\/e1$/),
      expect.stringMatching(/executions\/e1$/),
    ])
    t.server.answerStop({ cancelRequested: true })
    expect(await stopped).toEqual({ cancelRequested: true })
    t.session.dispose()
  })
})

describe('a POST answered with an HTML page [R-POST-HTML]', () => {
  it('is a typed invalid_response naming the content type; the draft stays and the gate reopens', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Hello')
    const result = t.session.submit()
    await settle()
    t.server.answerPost(
      new Response('<!doctype html><title>Sign in</title>', {
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
      }),
    )
    const outcome = await result
    expect(outcome).toMatchObject({ outcome: 'failed', error: { code: 'invalid_response' } })
    expect(outcome.outcome === 'failed' && outcome.error.message).toMatch(/text\/html/)
    await settle()
    expect(t.session.getState()).toMatchObject({
      status: 'recovering',
      draft: 'Hello',
      error: { code: 'invalid_response' },
    })
    t.server.answerRead(empty)
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', canSubmit: true, draft: 'Hello' })
    t.session.dispose()
  })
})

describe('a stream that does not begin with execution-started (released n8n) [R-STREAM-NEVER-CLOSED R-N8N-NO-STARTED]', () => {
  it('is followed, never closed, and takes the execution id that done names', async () => {
    const warnings: string[] = []
    const t = setup({ onWarning: (message) => warnings.push(message) })
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Hi')
    const result = t.session.submit()
    await settle()
    const stream = t.server.openStream()
    stream.send(
      { type: 'start-step' },
      { type: 'text-start', id: 'm' },
      { type: 'text-delta', id: 'm', delta: 'Hello' },
    )
    await settle()
    expect(await result).toEqual({ outcome: 'accepted', executionId: null })
    expect(t.session.getState()).toMatchObject({ status: 'streaming', draft: '' })
    expect(t.session.getState().messages[1]?.content).toEqual([{ type: 'text', text: 'Hello' }])
    stream.raw('data: {"type":"agent-mood","level":1}\n\n')
    stream.send({ type: 'text-delta', id: 'm', delta: ' there' })
    await settle()
    expect(stream.cancelled).toBe(false)
    stream.send(
      { type: 'finish-step' },
      { type: 'done', sessionId: 't1', executionId: 'n8nExec16chars01' },
    )
    await settle()
    expect(ids(t)).toEqual(['n8nExec16chars01:user', 'n8nExec16chars01:assistant'])
    expect(warnings).toEqual([
      expect.stringMatching(/began with "start-step" instead of "execution-started"/),
      expect.stringMatching(/unknown type "agent-mood"/),
    ])
    t.session.dispose()
  })
})

describe('a browser that forbids storage [R-DRAFT-STORAGE]', () => {
  it('keeps drafts in memory, with one warning, and never throws', () => {
    const warnings: string[] = []
    const forbidden = {
      getItem: () => {
        throw new DOMException('The operation is insecure.', 'SecurityError')
      },
      setItem: () => {
        throw new DOMException('The operation is insecure.', 'SecurityError')
      },
      removeItem: () => {
        throw new DOMException('The operation is insecure.', 'SecurityError')
      },
    }
    const client = createPreviewChatClient({
      storage: forbidden,
      push: false,
      relay: false,
      onWarning: (message) => warnings.push(message),
      fetch: () => new Promise(() => {}),
    })
    const session = client.session(key)
    session.setDraft('Not lost')
    expect(session.getState().draft).toBe('Not lost')
    session.dispose()
    // The next session of the thread (a thread switch and back) finds the draft in memory.
    expect(client.session(key).getState().draft).toBe('Not lost')
    expect(warnings).toEqual([expect.stringMatching(/kept in memory only/)])
  })
})

describe('a late Stop [R-STOP-LATE]', () => {
  it('names the execution it was asked for, even when a later one is known before it is sent again', async () => {
    const t = setup()
    t.server.answerRead(runningTurn({ executionId: 'e1' }))
    await settle()
    const result = t.session.stop()
    await settle()
    // The server asks to wait; meanwhile e1 ends and e2 starts in another tab, and this tab reads it.
    t.server.answerStop({ code: 503, message: 'busy' }, 503, { 'retry-after': '2' })
    await settle()
    t.push.updated('e2')
    await settle()
    t.server.answerRead(
      snapshot(
        [...finishedTurn('e1', 'Q', 'A'), ...runningTurn({ executionId: 'e2' }).messages],
        'e2',
      ),
    )
    await settle()
    await vi.advanceTimersByTimeAsync(2_000)
    await settle()
    // Never the later execution: e1 is over, so the Stop is not sent again at all.
    expect(
      t.server.requests.filter((r) => r.method === 'DELETE').map((r) => r.path.split('/').at(-1)),
    ).toEqual(['e1'])
    expect(await result).toMatchObject({ cancelRequested: false })
    // e2 is followed, not stopped.
    expect(t.session.getState()).toMatchObject({ status: 'following', activeExecutionId: 'e2' })
    t.session.dispose()
  })
})
