import { describe, expect, it } from 'vitest'
import { PreviewChatError } from '../errors'
import { isTerminalEvent, parseTurnEvent, type TurnEvent } from '../events'

// One valid example of every event type of the wire contract's turn stream table.
const valid: TurnEvent[] = [
  { type: 'execution-started', executionId: 'exec-1', sessionId: 'thread-1' },
  { type: 'start-step' },
  { type: 'finish-step' },
  { type: 'text-start', id: 't1' },
  { type: 'text-delta', id: 't1', delta: 'Hel' },
  { type: 'text-end', id: 't1' },
  { type: 'reasoning-start', id: 'r1' },
  { type: 'reasoning-delta', id: 'r1', delta: 'thinking' },
  { type: 'reasoning-end', id: 'r1' },
  { type: 'tool-input-start', toolCallId: 'call-1', toolName: 'search' },
  { type: 'tool-input-delta', toolCallId: 'call-1', delta: '{"q":' },
  { type: 'tool-call', toolCallId: 'call-1', toolName: 'search', input: { q: 'x' } },
  {
    type: 'tool-execution-start',
    toolCallId: 'call-1',
    toolName: 'search',
    startTime: 1700000000000,
  },
  {
    type: 'tool-execution-end',
    toolCallId: 'call-1',
    toolName: 'search',
    isError: false,
    endTime: '2026-11-30T10:00:00.000Z',
  },
  { type: 'tool-result', toolCallId: 'call-1', toolName: 'search', output: ['a'] },
  {
    type: 'tool-result',
    toolCallId: 'call-1',
    toolName: 'search',
    output: null,
    isError: true,
    canceled: true,
  },
  {
    type: 'tool-call-suspended',
    payload: { toolCallId: 'call-2', runId: 'run-1', toolName: 'approve', input: { amount: 3 } },
  },
  {
    type: 'subagent-chunk',
    parentToolCallId: 'call-3',
    taskPath: 'a/b',
    chunk: { type: 'text-delta', delta: 'x' },
  },
  {
    type: 'subagent-chunk',
    parentToolCallId: 'call-3',
    taskPath: 'a',
    chunk: { type: 'reasoning-start' },
  },
  {
    type: 'subagent-chunk',
    parentToolCallId: 'call-3',
    taskPath: 'a',
    chunk: { type: 'reasoning-delta', delta: 'hmm' },
  },
  {
    type: 'subagent-chunk',
    parentToolCallId: 'call-3',
    taskPath: 'a',
    chunk: { type: 'reasoning-end' },
  },
  {
    type: 'subagent-chunk',
    parentToolCallId: 'call-3',
    taskPath: 'a',
    chunk: { type: 'tool-input-start', toolCallId: 'c', toolName: 'fetch' },
  },
  {
    type: 'subagent-chunk',
    parentToolCallId: 'call-3',
    taskPath: 'a',
    chunk: { type: 'tool-execution-start', toolCallId: 'c', toolName: 'fetch', startTime: 1 },
  },
  {
    type: 'subagent-chunk',
    parentToolCallId: 'call-3',
    taskPath: 'a',
    chunk: {
      type: 'tool-execution-end',
      toolCallId: 'c',
      toolName: 'fetch',
      isError: false,
      endTime: 2,
    },
  },
  { type: 'warning', message: 'slow model' },
  { type: 'warning', message: 'slow model', code: 'slow' },
  { type: 'error', message: 'boom' },
  {
    type: 'error',
    message: 'A turn is already running in this conversation.',
    errorCode: 'turn_already_running',
  },
  { type: 'done' },
  { type: 'done', sessionId: 'thread-1', executionId: 'exec-1' },
]

describe('parseTurnEvent [R-WIRE-EVENTS]', () => {
  it.each(valid.map((event) => [event.type, event] as const))(
    'accepts a valid %s event',
    (_, event) => {
      expect(parseTurnEvent(JSON.stringify(event))).toEqual({ kind: 'event', event })
    },
  )

  it('accepts the exact turn_already_running line of the wire contract [R-WIRE-CONFLICT-LINE]', () => {
    const line =
      '{"type":"error","message":"A turn is already running in this conversation.","errorCode":"turn_already_running"}'
    const result = parseTurnEvent(line)
    expect(result).toMatchObject({
      kind: 'event',
      event: { type: 'error', errorCode: 'turn_already_running' },
    })
  })

  it('drops fields the contract does not name, so nothing unvalidated passes through', () => {
    const result = parseTurnEvent('{"type":"text-delta","id":"t","delta":"a","extra":{"x":1}}')
    expect(result).toEqual({ kind: 'event', event: { type: 'text-delta', id: 't', delta: 'a' } })
  })

  it('tolerates unknown event types for forward compatibility', () => {
    expect(parseTurnEvent('{"type":"source-url","url":"https://x"}')).toEqual({
      kind: 'ignored',
      type: 'source-url',
    })
  })

  it('tolerates unknown child chunk types inside a known subagent-chunk', () => {
    const line =
      '{"type":"subagent-chunk","parentToolCallId":"c","taskPath":"a","chunk":{"type":"image"}}'
    expect(parseTurnEvent(line)).toEqual({ kind: 'ignored', type: 'subagent-chunk/image' })
  })

  it.each([
    ['not JSON', 'data: {"type"'],
    ['an HTML page', '<!doctype html>'],
    ['a JSON array', '[1,2]'],
    ['null', 'null'],
    ['no type', '{"delta":"a"}'],
    ['a numeric type', '{"type":3}'],
    ['a delta that is not a string', '{"type":"text-delta","id":"t","delta":5}'],
    ['a text-delta without id', '{"type":"text-delta","delta":"a"}'],
    ['execution-started without sessionId', '{"type":"execution-started","executionId":"e"}'],
    ['tool-call without input', '{"type":"tool-call","toolCallId":"c","toolName":"n"}'],
    [
      'tool-execution-end without isError',
      '{"type":"tool-execution-end","toolCallId":"c","toolName":"n","endTime":1}',
    ],
    [
      'a suspension without runId',
      '{"type":"tool-call-suspended","payload":{"toolCallId":"c","toolName":"n","input":1}}',
    ],
    [
      'a child text delta without delta',
      '{"type":"subagent-chunk","parentToolCallId":"c","taskPath":"a","chunk":{"type":"text-delta"}}',
    ],
    [
      'a subagent-chunk without chunk',
      '{"type":"subagent-chunk","parentToolCallId":"c","taskPath":"a"}',
    ],
    ['an error without message', '{"type":"error","errorCode":"x"}'],
    ['done with a numeric executionId', '{"type":"done","executionId":7}'],
  ])('rejects %s with a typed invalid_response error', (_, line) => {
    const result = parseTurnEvent(line)
    expect(result.kind).toBe('invalid')
    if (result.kind !== 'invalid') return
    expect(PreviewChatError.isInstance(result.error)).toBe(true)
    expect(result.error.code).toBe('invalid_response')
    expect(result.error.message).toMatch(/Check/)
  })

  it('names the failing field in the error', () => {
    const result = parseTurnEvent('{"type":"text-delta","id":"t","delta":5}')
    expect(result.kind === 'invalid' && result.error.issues).toEqual([
      expect.stringMatching(/^delta: /),
    ])
  })
})

describe('isTerminalEvent [R-WIRE-TERMINAL]', () => {
  it('is true exactly for done, error and tool-call-suspended', () => {
    const terminal = valid.filter(isTerminalEvent).map((event) => event.type)
    expect(new Set(terminal)).toEqual(new Set(['done', 'error', 'tool-call-suspended']))
  })
})
