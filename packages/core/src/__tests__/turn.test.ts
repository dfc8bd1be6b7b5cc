import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { assertSeeded } from './seeded'
import type { TurnEvent } from '../wire/contract/events'
import { markTruncated } from '../engine/transcript'
import { applyTurnEvent, applyTurnEvents, startTurn, type LiveTurn } from '../engine/fold'
import { assistantMessage, snapshot } from './harness'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

const options = { delegationCharLimit: 10, now: () => 1 }
const begin = () =>
  startTurn({
    executionId: 'e1',
    sessionId: 't1',
    message: 'Q',
    createdAt: '2026-11-30T10:00:00.000Z',
  })
const apply = (turn: LiveTurn, ...events: TurnEvent[]) =>
  events.reduce((t, event) => applyTurnEvent(t, event, options), turn)
const child = (chunk: Extract<TurnEvent, { type: 'subagent-chunk' }>['chunk']): TurnEvent => ({
  type: 'subagent-chunk',
  parentToolCallId: 'd1',
  taskPath: 'research',
  chunk,
})

describe('live turns, shaped like the record [R-LIVE-STREAM R-WIRE-NO-STREAM-IDS]', () => {
  it('opens with the person message and an empty running answer', () => {
    expect(begin()).toMatchObject({
      user: {
        id: 'e1:user',
        role: 'user',
        content: [{ type: 'text', text: 'Q' }],
        executionStatus: 'running',
      },
      assistant: { id: 'e1:assistant', role: 'assistant', content: [], executionStatus: 'running' },
      ended: false,
    })
  })

  it('keeps parts in the order their streams started, and folds deltas into them', () => {
    const turn = apply(
      begin(),
      { type: 'text-start', id: 'a' },
      { type: 'reasoning-start', id: 'r' },
      { type: 'text-delta', id: 'a', delta: 'one ' },
      { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
      { type: 'text-delta', id: 'a', delta: 'two' },
      { type: 'text-start', id: 'b' },
      { type: 'text-delta', id: 'b', delta: 'three' },
    )
    expect(turn.assistant.content).toEqual([
      { type: 'text', text: 'one two' },
      { type: 'reasoning', text: 'hmm', startTime: 1 },
      { type: 'text', text: 'three' },
    ])
  })

  it('builds one tool-call part from input, execution and result events', () => {
    const turn = apply(
      begin(),
      { type: 'tool-input-start', toolCallId: 'c', toolName: 'search' },
      { type: 'tool-input-delta', toolCallId: 'c', delta: '{"q"' },
      { type: 'tool-call', toolCallId: 'c', toolName: 'search', input: { q: 1 } },
      { type: 'tool-execution-start', toolCallId: 'c', toolName: 'search', startTime: 5 },
      {
        type: 'tool-execution-end',
        toolCallId: 'c',
        toolName: 'search',
        isError: true,
        endTime: 6,
      },
      { type: 'tool-result', toolCallId: 'c', toolName: 'search', output: 'boom', isError: true },
    )
    expect(turn.assistant.content).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'c',
        toolName: 'search',
        input: { q: 1 },
        startTime: 5,
        endTime: 6,
        output: 'boom',
        state: 'rejected',
        error: 'boom',
      },
    ])
  })

  it('ends on done, error and tool-call-suspended [R-WIRE-TERMINAL]', () => {
    expect(apply(begin(), { type: 'done' })).toMatchObject({
      ended: true,
      assistant: { executionStatus: 'success' },
    })
    expect(apply(begin(), { type: 'error', message: 'x' })).toMatchObject({
      ended: true,
      assistant: { executionStatus: 'error', executionError: 'x' },
      user: { executionStatus: 'error', executionError: 'x' },
    })
    const payload = { toolCallId: 'c', runId: 'r', toolName: 'approve', input: { n: 1 } }
    const suspended = apply(begin(), { type: 'tool-call-suspended', payload })
    expect(suspended.ended).toBe(true)
    expect(suspended.assistant.content).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'c',
        toolName: 'approve',
        input: { n: 1 },
        suspendPayload: payload,
      },
    ])
  })

  it('copies only the changed message: the person message keeps its identity across deltas', () => {
    const opened = apply(begin(), { type: 'text-start', id: 'a' })
    const next = apply(opened, { type: 'text-delta', id: 'a', delta: 'x' })
    expect(next.user).toBe(opened.user)
    expect(next.assistant).not.toBe(opened.assistant)
  })
})

describe('delegations (spec: "Child text and reasoning share the existing 4,000-character limit for each delegation") [R-DELEGATION-BUDGET]', () => {
  it('caps child text and reasoning together at the budget, cutting the delta that crosses it, and flags truncated', () => {
    const turn = apply(
      begin(),
      { type: 'tool-input-start', toolCallId: 'd1', toolName: 'delegate' },
      child({ type: 'reasoning-start' }),
      child({ type: 'reasoning-delta', delta: 'abcd' }),
      child({ type: 'reasoning-end' }),
      child({ type: 'tool-input-start', toolCallId: 'k', toolName: 'fetch' }),
      child({
        type: 'tool-execution-end',
        toolCallId: 'k',
        toolName: 'fetch',
        isError: false,
        endTime: 1,
      }),
      child({ type: 'text-delta', delta: 'efgh' }),
    )
    expect(turn.assistant.content[0]).toMatchObject({
      childTrace: {
        text: 'efgh',
        reasoningSegments: [{ id: 'segment-1', content: 'abcd' }],
        steps: [{ toolCallId: 'k', running: false }],
      },
    })
    const before = turn.assistant.content[0]
    expect(before?.type === 'tool-call' && before.childTrace?.truncated).toBeUndefined()

    const capped = apply(
      turn,
      child({ type: 'text-delta', delta: 'ijklmn' }),
      child({ type: 'text-delta', delta: 'more' }),
    )
    const part = capped.assistant.content[0]
    expect(part?.type === 'tool-call' && part.childTrace).toMatchObject({
      text: 'efghij',
      truncated: true,
    })
  })

  it('keeps separate budgets per delegation', () => {
    const turn = apply(begin(), child({ type: 'text-delta', delta: '0123456789AB' }), {
      type: 'subagent-chunk',
      parentToolCallId: 'd2',
      taskPath: 'x',
      chunk: { type: 'text-delta', delta: 'short' },
    })
    expect(turn.delegations).toEqual({
      d1: { used: 10, openSegment: null },
      d2: { used: 5, openSegment: null },
    })
  })

  it('flags the same delegation truncated when it is recovered from the record [R-DELEGATION-TRUNCATED]', () => {
    const recorded = snapshot([
      assistantMessage('e1', [
        {
          type: 'tool-call',
          toolCallId: 'd1',
          toolName: 'delegate',
          input: null,
          childTrace: { text: '0123456789', reasoningSegments: [], steps: [] },
        },
        {
          type: 'tool-call',
          toolCallId: 'd2',
          toolName: 'delegate',
          input: null,
          childTrace: { text: 'short', reasoningSegments: [], steps: [] },
        },
      ]),
    ])
    const marked = markTruncated(recorded, 10)
    expect(
      marked.messages[0]?.content.map((p) => p.type === 'tool-call' && p.childTrace?.truncated),
    ).toEqual([true, undefined])
    const unchanged = snapshot([assistantMessage('e1', [{ type: 'text', text: 'x' }])])
    expect(markTruncated(unchanged, 10)).toBe(unchanged)
  })
})

describe('batches (one network chunk at a time) [R-FOLD-ONE R-WIRE-ONE-PARSE]', () => {
  const event = fc.oneof(
    fc.record({
      type: fc.constantFrom('text-delta' as const, 'reasoning-delta' as const),
      id: fc.constantFrom('a', 'b'),
      delta: fc.string({ maxLength: 4 }),
    }),
    fc.record({
      type: fc.constantFrom('text-start' as const, 'reasoning-start' as const),
      id: fc.constantFrom('a', 'b'),
    }),
    fc.record({
      type: fc.constant('tool-call' as const),
      toolCallId: fc.constantFrom('c1', 'c2'),
      toolName: fc.constant('t'),
      input: fc.nat(),
    }),
    fc.record({
      type: fc.constant('subagent-chunk' as const),
      parentToolCallId: fc.constant('d1'),
      taskPath: fc.constant('x'),
      chunk: fc.record({
        type: fc.constant('text-delta' as const),
        delta: fc.string({ maxLength: 6 }),
      }),
    }),
    fc.constant({ type: 'done' as const }),
  )

  it('apply exactly as the events one by one would, stopping at the end of the turn', () => {
    assertSeeded(
      'turn',
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const oneByOne = events.reduce(
          (t, e) => (t.ended ? t : applyTurnEvent(t, e as TurnEvent, options)),
          begin(),
        )
        expect(applyTurnEvents(begin(), events as TurnEvent[], options)).toEqual(oneByOne)
      }),
    )
  })
})
