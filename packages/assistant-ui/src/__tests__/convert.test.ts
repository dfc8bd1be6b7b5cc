// The conversion table of the README, row by row: a recorded part or message → assistant-ui's.
import { fromThreadMessageLike, type MessageStatus, type ThreadMessage } from '@assistant-ui/react'
import type { ExecutionStatus, Message, MessagePart } from '@preview-chat/react'
import { describe, expect, it } from 'vitest'
import { convertMessage, convertPart, messageStatus } from '../convert'

const message = (
  content: MessagePart[],
  executionStatus: ExecutionStatus = 'success',
  extra: Partial<Message> = {},
): Message => ({
  id: 'e1:assistant',
  role: 'assistant',
  content,
  executionId: 'e1',
  executionStatus,
  createdAt: '2026-12-01T10:00:00.000Z',
  ...extra,
})

const call = { type: 'tool-call', toolName: 'word_count', toolCallId: 'c1' } as const

describe('parts', () => {
  const rows: [string, MessagePart, Record<string, unknown>][] = [
    ['text', { type: 'text', text: 'Hello' }, { type: 'text', text: 'Hello' }],
    [
      'reasoning',
      { type: 'reasoning', text: 'Thinking', startTime: 1, endTime: 2 },
      { type: 'reasoning', text: 'Thinking' },
    ],
    [
      'file',
      { type: 'file', fileId: 'f1', fileName: 'a.pdf', mimeType: 'application/pdf', sizeBytes: 9 },
      {
        type: 'file',
        data: 'f1',
        sourceType: 'id',
        filename: 'a.pdf',
        mimeType: 'application/pdf',
        providerMetadata: { previewChat: { fileId: 'f1', sizeBytes: 9 } },
      },
    ],
    [
      'a tool call whose input is still being written',
      { ...call },
      { ...call, args: {}, argsText: '' },
    ],
    [
      'a running tool call',
      { ...call, input: { text: 'a b' } },
      { ...call, args: { text: 'a b' }, argsText: '{"text":"a b"}' },
    ],
    [
      'a resolved tool call',
      { ...call, input: { text: 'a b' }, state: 'resolved', output: { words: 2 } },
      { ...call, args: { text: 'a b' }, argsText: '{"text":"a b"}', result: { words: 2 } },
    ],
    [
      'a resolved tool call without output',
      { ...call, input: {}, state: 'resolved' },
      { ...call, args: {}, argsText: '{}', result: null },
    ],
    [
      'a rejected tool call',
      { ...call, input: {}, state: 'rejected', error: 'Cancelled' },
      { ...call, args: {}, argsText: '{}', result: 'Cancelled', isError: true },
    ],
    [
      'an error without a state',
      { ...call, input: {}, error: 'boom' },
      { ...call, args: {}, argsText: '{}', result: 'boom', isError: true },
    ],
    [
      'an input that is not an object',
      { ...call, input: 'plain', state: 'resolved', output: 1 },
      { ...call, args: { input: 'plain' }, argsText: '"plain"', result: 1 },
    ],
    [
      'a suspended tool call',
      { ...call, toolName: 'request_approval', input: {}, suspendPayload: { ask: 'ok?' } },
      {
        ...call,
        toolName: 'request_approval',
        args: {},
        argsText: '{}',
        interrupt: { type: 'human', payload: { ask: 'ok?' } },
      },
    ],
  ]
  it.each(rows)('%s', (_name, part, expected) => {
    expect(convertPart(part, message([part]))).toEqual(expected)
  })

  it("a delegation's child trace becomes the tool call's nested message", () => {
    const part: MessagePart = {
      ...call,
      toolName: 'delegate',
      input: { task: 'research' },
      state: 'resolved',
      output: { summary: 'done' },
      childTrace: {
        text: 'ttt',
        reasoningSegments: [{ id: 'r1', content: 'rrr' }],
        steps: [
          { toolCallId: 's1', toolName: 'search', running: false },
          { toolCallId: 's2', toolName: 'fetch', running: true },
        ],
        truncated: true,
      },
    }
    const converted = convertPart(part, message([part]))
    expect(converted).toMatchObject({ type: 'tool-call', result: { summary: 'done' } })
    const [child] = (converted as { messages: readonly ThreadMessage[] }).messages
    expect(child).toMatchObject({
      id: 'c1:child',
      role: 'assistant',
      status: { type: 'incomplete', reason: 'length' },
      content: [
        { type: 'reasoning', text: 'rrr' },
        { type: 'tool-call', toolCallId: 's1', toolName: 'search', result: null },
        { type: 'tool-call', toolCallId: 's2', toolName: 'fetch' },
        { type: 'text', text: 'ttt' },
      ],
      metadata: { custom: { truncated: true } },
    })
    expect(child!.content[2]).not.toHaveProperty('result')
  })

  it("a running delegation's child is running", () => {
    const part: MessagePart = {
      ...call,
      toolName: 'delegate',
      input: {},
      childTrace: { text: 't', reasoningSegments: [], steps: [] },
    }
    const converted = convertPart(part, message([part], 'running')) as {
      messages: readonly ThreadMessage[]
    }
    expect(converted.messages[0]!.status).toEqual({ type: 'running' })
  })
})

describe('values that are not JSON [R-KIT-CONVERT-TOTAL]', () => {
  const cycle: Record<string, unknown> = { name: 'loop' }
  cycle.self = cycle
  const rows: [string, unknown, string][] = [
    ['an object holding a BigInt', { count: 10n }, '[object Object]'],
    ['a bare BigInt', 10n, '[object BigInt]'],
    ['a cycle', cycle, '[object Object]'],
    [
      'a toJSON that throws, described',
      {
        toJSON: () => {
          throw new Error('no')
        },
      },
      '[object Object]',
    ],
    ['a function', () => 1, '() => 1'],
    [
      'an object whose toString is not a function, that JSON cannot write either',
      {
        toString: null,
        toJSON: () => {
          throw new Error('no')
        },
      },
      '[object Object]',
    ],
  ]
  it.each(rows)('%s: converting never throws', (_name, value, argsText) => {
    const part: MessagePart = { ...call, input: value, state: 'resolved', output: value }
    const converted = convertPart(part, message([part]))
    expect(converted).toMatchObject({ type: 'tool-call', argsText, result: value })
    expect(() => convertMessage(message([part]))).not.toThrow()
  })

  it('a getter that throws, on the input and the output, is described', () => {
    const hostile = Object.defineProperty({}, 'boom', {
      enumerable: true,
      get() {
        throw new Error('no')
      },
    })
    const part: MessagePart = { ...call, input: hostile, state: 'rejected', output: hostile }
    const converted = convertPart(part, message([part]))
    // (Not toMatchObject: it would read the getter itself.)
    expect(converted.type === 'tool-call' && [converted.argsText, converted.isError]).toEqual([
      '[object Object]',
      true,
    ])
    expect(converted.type === 'tool-call' && converted.result).toBe(hostile)
  })
})

describe('statuses', () => {
  const text: MessagePart = { type: 'text', text: 'Hi' }
  const suspended: MessagePart = { ...call, input: {}, suspendPayload: {} }
  const rows: [string, Message, MessageStatus][] = [
    ['running', message([text], 'running'), { type: 'running' }],
    ['success', message([text]), { type: 'complete', reason: 'stop' }],
    [
      'success with a suspended tool call',
      message([text, suspended]),
      { type: 'requires-action', reason: 'interrupt' },
    ],
    ['cancelled', message([text], 'cancelled'), { type: 'incomplete', reason: 'cancelled' }],
    [
      'error',
      message([text], 'error', { executionError: 'agent_failed: boom' }),
      { type: 'incomplete', reason: 'error', error: 'agent_failed: boom' },
    ],
    [
      'interrupted',
      message([text], 'interrupted'),
      {
        type: 'incomplete',
        reason: 'other',
        error: 'The turn was interrupted: the server went away.',
      },
    ],
  ]
  it.each(rows)('%s', (_name, recorded, expected) => {
    expect(messageStatus(recorded)).toEqual(expected)
    expect(convertMessage(recorded).status).toEqual(expected)
  })
})

describe('messages', () => {
  it('a user message keeps its id, text and time, with no status', () => {
    const user = message([{ type: 'text', text: 'Hello' }], 'running', {
      id: 'e1:user',
      role: 'user',
    })
    expect(convertMessage(user)).toEqual({
      id: 'e1:user',
      role: 'user',
      createdAt: new Date('2026-12-01T10:00:00.000Z'),
      content: [{ type: 'text', text: 'Hello' }],
      metadata: { custom: { executionId: 'e1', executionStatus: 'running' } },
    })
  })

  it('an assistant message carries its execution in metadata.custom', () => {
    const failed = message([], 'error', { executionError: 'boom' })
    expect(convertMessage(failed).metadata).toEqual({
      custom: { executionId: 'e1', executionStatus: 'error', executionError: 'boom' },
    })
  })

  it('every converted message is one assistant-ui accepts', () => {
    const parts: MessagePart[] = [
      { type: 'reasoning', text: 'r' },
      { ...call, input: { a: 1 }, state: 'resolved', output: 2 },
      { type: 'file', fileId: 'f', fileName: 'f.txt', mimeType: 'text/plain', sizeBytes: 1 },
      { type: 'text', text: 'done' },
    ]
    const thread = fromThreadMessageLike(convertMessage(message(parts)), 'x', {
      type: 'complete',
      reason: 'unknown',
    })
    expect(thread.content.map((part) => part.type)).toEqual([
      'reasoning',
      'tool-call',
      'file',
      'text',
    ])
  })
})
