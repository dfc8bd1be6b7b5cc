import { describe, expect, it } from 'vitest'
import {
  assistantMessage,
  empty,
  finishedTurn,
  now,
  settle,
  setup,
  snapshot,
  startLiveTurn,
  userMessage,
  aMessageId,
} from './harness'

const startTurn = (t: ReturnType<typeof setup>) => startLiveTurn(t, 'Hello')

describe('live stream (spec: "The original connection receives live SSE events") [R-LIVE-STREAM]', () => {
  it('posts once, becomes the execution of execution-started, and streams into snapshot-shaped messages', async () => {
    const t = setup()
    const { result, stream } = await startTurn(t)
    expect(result).toEqual({ outcome: 'accepted', executionId: 'e1' })
    expect(t.server.requests.filter((r) => r.method === 'POST')).toEqual([
      {
        method: 'POST',
        path: '/rest/projects/p1/agents/v2/a1/chat',
        body: { message: 'Hello', sessionId: 't1', newSession: true, messageId: aMessageId },
      },
    ])

    stream.send(
      { type: 'start-step' },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Let me ' },
      { type: 'reasoning-delta', id: 'r', delta: 'think.' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'tool-input-start', toolCallId: 'c1', toolName: 'search' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: { q: 'x' } },
      { type: 'tool-result', toolCallId: 'c1', toolName: 'search', output: { hits: 1 } },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hi ' },
      { type: 'text-delta', id: 't', delta: 'there' },
    )
    await settle()
    const live = t.session.getState()
    expect(live.status).toBe('streaming')
    expect(live.activeExecutionId).toBe('e1')
    expect(live.messages.map((m) => m.id)).toEqual(['e1:user', 'e1:assistant'])
    expect(live.messages[0]).toMatchObject(userMessage('e1', 'Hello', 'running'))
    expect(live.messages[1]?.content).toEqual([
      { type: 'reasoning', text: 'Let me think.', startTime: now, endTime: now },
      {
        type: 'tool-call',
        toolName: 'search',
        toolCallId: 'c1',
        input: { q: 'x' },
        output: { hits: 1 },
        state: 'resolved',
      },
      { type: 'text', text: 'Hi there' },
    ])

    stream.send(
      { type: 'text-end', id: 't' },
      { type: 'finish-step' },
      { type: 'done', executionId: 'e1' },
    )
    stream.close()
    await settle()
    // The stream ended: exactly one read follows, and its snapshot replaces the live view.
    expect(t.server.count('GET')).toBe(2)
    const recorded = [
      userMessage('e1', 'Hello'),
      assistantMessage('e1', [{ type: 'text', text: 'Hi there' }]),
    ]
    t.server.answerRead(snapshot(recorded))
    await settle()
    expect(t.session.getState().messages).toEqual(recorded)
    expect(t.statuses()).toEqual(['recovering', 'idle', 'submitting', 'streaming', 'idle'])
    expect(t.server.count('POST')).toBe(1)
    t.session.dispose()
  })

  it('clears the draft when the turn is accepted, not before [R-DRAFT-ACCEPTED]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Hello')
    void t.session.submit()
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'submitting', draft: 'Hello' })
    t.server.openStream().send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'streaming', draft: '' })
    t.session.dispose()
  })

  it('keeps a draft typed while the message was being posted [R-DRAFT-ACCEPTED]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Hello')
    void t.session.submit()
    t.session.setDraft('Hello, and also')
    await settle()
    t.server.openStream().send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
    await settle()
    expect(t.session.getState().draft).toBe('Hello, and also')
    t.session.dispose()
  })

  it('does not copy recorded messages per delta [R-READ-IDENTITY]', async () => {
    const t = setup()
    t.server.answerRead(snapshot(finishedTurn('e0', 'Before', 'Earlier answer')))
    await settle()
    const earlier = t.session.getState().messages
    t.session.setDraft('Hello')
    void t.session.submit()
    await settle()
    const stream = t.server.openStream()
    stream.send(
      { type: 'execution-started', executionId: 'e1', sessionId: 't1' },
      { type: 'text-start', id: 't' },
    )
    for (let i = 0; i < 50; i++) stream.send({ type: 'text-delta', id: 't', delta: 'x' })
    await settle()
    const messages = t.session.getState().messages
    expect(messages[0]).toBe(earlier[0])
    expect(messages[1]).toBe(earlier[1])
    expect(messages[3]?.content).toEqual([{ type: 'text', text: 'x'.repeat(50) }])
    t.session.dispose()
  })

  it('resumes a suspension as a new execution with no user message [R-RECOVER-SUSPENDED]', async () => {
    const t = setup()
    const suspended = snapshot(finishedTurn('e1', 'Pay', 'Waiting'), null, [
      { toolCallId: 'c1', runId: 'run-1' },
    ])
    t.server.answerRead(suspended)
    await settle()
    const result = t.session.resume({ runId: 'run-1', toolCallId: 'c1' }, { approved: true })
    await settle()
    expect(t.server.requests.at(-1)).toEqual({
      method: 'POST',
      path: '/rest/projects/p1/agents/v2/a1/chat/resume',
      body: { runId: 'run-1', toolCallId: 'c1', resumeData: { approved: true } },
    })
    const stream = t.server.openStream()
    stream.send(
      { type: 'execution-started', executionId: 'e2', sessionId: 't1' },
      { type: 'text-delta', id: 't', delta: 'Paid' },
    )
    expect(await result).toEqual({ outcome: 'accepted', executionId: 'e2' })
    await settle()
    expect(t.session.getState().messages.map((m) => m.id)).toEqual([
      'e1:user',
      'e1:assistant',
      'e2:assistant',
    ])
    // The answered suspension is no longer offered, though the record still lists it until read.
    expect(t.session.getState().openSuspensions).toEqual([])
    // A second resume while the first runs is refused without a request.
    expect(
      await t.session.resume({ runId: 'run-1', toolCallId: 'c1' }, { approved: true }),
    ).toEqual({ outcome: 'busy' })
    expect(t.server.count('POST')).toBe(1)
    t.session.dispose()
  })
})

describe('cut streams (spec: "The client does not submit the message or resume request again") [R-POST-ONCE]', () => {
  it('recovers from history when the stream closes without a terminal event [R-RECOVER-CUT R-RECOVER-READ]', async () => {
    const t = setup()
    const { stream } = await startTurn(t)
    stream.send({ type: 'text-delta', id: 't', delta: 'Partial' })
    await settle()
    stream.close()
    await settle()
    expect(t.session.getState().status).toBe('recovering')
    // The live text stays on screen while the record is read.
    expect(t.session.getState().messages[1]?.content).toEqual([{ type: 'text', text: 'Partial' }])
    t.server.answerRead(
      snapshot(
        [
          userMessage('e1', 'Hello', 'running'),
          assistantMessage('e1', [{ type: 'text', text: 'Partial and more' }], 'running'),
        ],
        'e1',
      ),
    )
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'following', activeExecutionId: 'e1' })
    expect(t.session.getState().messages[1]?.content).toEqual([
      { type: 'text', text: 'Partial and more' },
    ])
    t.push.updated('e1')
    await settle()
    t.server.answerRead(snapshot(finishedTurn('e1', 'Hello', 'Partial and more, done')))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    expect(t.statuses()).toEqual([
      'recovering',
      'idle',
      'submitting',
      'streaming',
      'recovering',
      'following',
      'idle',
    ])
    expect(t.server.count('POST')).toBe(1)
    t.session.dispose()
  })

  it('recovers when the stream fails mid-read [R-RECOVER-CUT]', async () => {
    const t = setup()
    const { stream } = await startTurn(t)
    stream.send({ type: 'text-delta', id: 't', delta: 'Par' })
    await settle()
    stream.fail()
    await settle()
    expect(t.session.getState().status).toBe('recovering')
    expect(t.server.count('GET')).toBe(2)
    expect(t.server.count('POST')).toBe(1)
    t.session.dispose()
  })

  it('skips a malformed event, reports it once and keeps the stream open (row i) [R-STREAM-NEVER-CLOSED]', async () => {
    const warnings: string[] = []
    const t = setup({ onWarning: (message) => warnings.push(message) })
    const { stream } = await startTurn(t)
    stream.send({ type: 'text-delta', id: 't', delta: 'Good' })
    stream.raw('data: {"type":"text-delta","id":"t","delta":7}\n\n')
    stream.raw('data: {"type":"text-delta","id":"t","delta":7}\n\n')
    stream.send({ type: 'text-delta', id: 't', delta: ' and more' })
    await settle()
    expect(t.session.getState().status).toBe('streaming')
    expect(t.session.getState().messages[1]?.content).toEqual([
      { type: 'text', text: 'Good and more' },
    ])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/Skipped a turn stream event/)
    expect(stream.cancelled).toBe(false)
    t.session.dispose()
  })

  it('skips unknown events and keeps streaming [R-STREAM-NEVER-CLOSED]', async () => {
    const t = setup()
    const { stream } = await startTurn(t)
    stream.raw('data: {"type":"source-url","url":"x"}\n\n:ping\n\n')
    stream.send({ type: 'text-delta', id: 't', delta: 'Still here' })
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'streaming' })
    expect(t.session.getState().messages[1]?.content).toEqual([
      { type: 'text', text: 'Still here' },
    ])
    t.session.dispose()
  })

  it('a POST that got no answer is not sent again; the record says whether it was taken [R-POST-NO-ANSWER]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Hello')
    const result = t.session.submit()
    await settle()
    t.server.failPost('network-error')
    expect(await result).toMatchObject({ outcome: 'failed', error: { code: 'network_error' } })
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'recovering', draft: 'Hello' })
    t.server.answerRead(
      snapshot(
        [userMessage('e1', 'Hello', 'running'), assistantMessage('e1', [], 'running')],
        'e1',
      ),
    )
    await settle()
    expect(t.session.getState().status).toBe('following')
    expect(t.server.count('POST')).toBe(1)
    t.session.dispose()
  })

  it('an in-band error ends the turn with the error recorded on the message [R-WIRE-TERMINAL R-SERVER-STATUSES]', async () => {
    const t = setup()
    const { stream } = await startTurn(t)
    stream.send({ type: 'error', message: 'Model failed', errorCode: 'agent_misconfigured' })
    await settle()
    const state = t.session.getState()
    expect(state.messages[1]).toMatchObject({
      executionStatus: 'error',
      executionError: 'Model failed',
    })
    expect(state.error).toMatchObject({ code: 'agent_error', serverCode: 'agent_misconfigured' })
    t.session.dispose()
  })
})
