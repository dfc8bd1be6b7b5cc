import { describe, expect, it } from 'vitest'
import { completeReleasedSnapshot as complete } from '../released'
import {
  createSnapshotReuse,
  parseHistorySnapshot,
  type HistorySnapshot,
  type Message,
} from '../snapshot'

const userMessage: Message = {
  id: 'exec-1:user',
  role: 'user',
  content: [{ type: 'text', text: 'Hello' }],
  executionId: 'exec-1',
  executionStatus: 'success',
  createdAt: '2026-11-30T10:00:00.000Z',
}

// Every part type and every optional field of the wire contract's snapshot shapes.
const assistantMessage: Message = {
  id: 'exec-1:assistant',
  role: 'assistant',
  executionId: 'exec-1',
  executionStatus: 'error',
  executionError: 'model failed',
  createdAt: '2026-11-30T10:00:01.000Z',
  content: [
    { type: 'reasoning', text: 'thinking', startTime: 1, endTime: '2026-11-30T10:00:01.500Z' },
    { type: 'reasoning', text: 'more' },
    { type: 'tool-call', toolName: 'search', toolCallId: 'call-1', input: { q: 'x' } },
    {
      type: 'tool-call',
      toolName: 'search',
      toolCallId: 'call-2',
      input: null,
      state: 'rejected',
      output: { results: [] },
      error: 'denied',
      startTime: 1,
      endTime: 2,
      suspendPayload: { question: 'Approve?' },
    },
    {
      type: 'tool-call',
      toolName: 'delegate',
      toolCallId: 'call-3',
      input: { task: 'research' },
      state: 'resolved',
      childTrace: {
        text: 'child text',
        reasoningSegments: [
          { id: 'seg-1', content: 'child thought', startTime: 1, endTime: 2 },
          { id: 'seg-2', content: '' },
        ],
        steps: [{ toolCallId: 'child-call', toolName: 'fetch', running: false }],
      },
    },
    { type: 'file', fileId: 'f1', fileName: 'a.pdf', mimeType: 'application/pdf', sizeBytes: 1024 },
    { type: 'text', text: 'Answer' },
  ],
}

const snapshot: HistorySnapshot = {
  messages: [userMessage, assistantMessage],
  openSuspensions: [
    { toolCallId: 'call-2', runId: 'run-1', suspendPayload: { question: 'Approve?' } },
    { toolCallId: 'call-4', runId: 'run-2' },
  ],
  activeExecutionId: 'exec-1',
}

describe('parseHistorySnapshot [R-WIRE-SNAPSHOT]', () => {
  it('accepts a bare snapshot with every part type', () => {
    expect(parseHistorySnapshot(snapshot)).toEqual({ success: true, value: snapshot })
  })

  it('accepts the { data } envelope [R-WIRE-ENVELOPE]', () => {
    expect(parseHistorySnapshot({ data: snapshot })).toEqual({ success: true, value: snapshot })
  })

  it('accepts an empty thread with no running execution', () => {
    const empty = { messages: [], openSuspensions: [], activeExecutionId: null }
    expect(parseHistorySnapshot({ data: empty })).toEqual({ success: true, value: empty })
  })

  it.each(['running', 'success', 'error', 'cancelled', 'interrupted'] as const)(
    'accepts executionStatus %s',
    (executionStatus) => {
      const value = { ...snapshot, messages: [{ ...userMessage, executionStatus }] }
      expect(parseHistorySnapshot(value).success).toBe(true)
    },
  )

  it('drops part types it does not know, keeping the rest of the message', () => {
    const message = {
      ...userMessage,
      content: [
        { type: 'source-url', url: 'x' },
        { type: 'text', text: 'Hello' },
      ],
    }
    const result = parseHistorySnapshot({ ...snapshot, messages: [message] })
    expect(result.success && result.value.messages[0]?.content).toEqual([
      { type: 'text', text: 'Hello' },
    ])
  })

  it('strips fields the contract does not name [R-WIRE-NO-STREAM-IDS]', () => {
    const result = parseHistorySnapshot({
      ...snapshot,
      cursor: 'x',
      messages: [{ ...userMessage, extra: 1 }],
    })
    expect(result.success && result.value).toEqual({ ...snapshot, messages: [userMessage] })
  })

  const broken: [string, unknown][] = [
    ['null', null],
    ['a string', 'oops'],
    ['an array', []],
    ['activeExecutionId of the wrong type', { ...snapshot, activeExecutionId: 3 }],
    ['messages that are not an array', { ...snapshot, messages: {} }],
    ['an unknown role', { ...snapshot, messages: [{ ...userMessage, role: 'system' }] }],
    [
      'an unknown executionStatus',
      { ...snapshot, messages: [{ ...userMessage, executionStatus: 'done' }] },
    ],
    [
      'a message without executionId',
      { ...snapshot, messages: [{ ...userMessage, executionId: undefined }] },
    ],
    [
      'a text part without text',
      { ...snapshot, messages: [{ ...userMessage, content: [{ type: 'text' }] }] },
    ],
    ['a part that is not an object', { ...snapshot, messages: [{ ...userMessage, content: [7] }] }],
    [
      'a child trace without steps',
      {
        ...snapshot,
        messages: [
          {
            ...userMessage,
            content: [
              {
                type: 'tool-call',
                toolName: 'd',
                toolCallId: 'c',
                input: 1,
                childTrace: { text: '', reasoningSegments: [] },
              },
            ],
          },
        ],
      },
    ],
    ['a suspension without runId', { ...snapshot, openSuspensions: [{ toolCallId: 'c' }] }],
    ['an envelope around nothing', { data: null }],
  ]

  it.each(broken)('rejects %s with a typed invalid_response error', (_, body) => {
    const result = parseHistorySnapshot(body)
    expect(result.success).toBe(false)
    if (result.success) return
    expect(result.error.code).toBe('invalid_response')
    expect(result.error.issues.length).toBeGreaterThan(0)
  })

  it('derives what the released n8n 2.41 leaves out: the active execution and the user statuses [R-N8N-HISTORY]', () => {
    const assistant = { ...userMessage, id: 'e2:assistant', role: 'assistant', executionId: 'e2' }
    const released = {
      messages: [
        { ...userMessage, executionStatus: undefined },
        { ...userMessage, id: 'e1:assistant', role: 'assistant', executionStatus: 'cancelled' },
        { ...userMessage, id: 'e2:user', executionId: 'e2', executionStatus: undefined },
        { ...assistant, executionStatus: 'running' },
        { ...userMessage, id: 'e3:user', executionId: 'e3', executionStatus: undefined },
      ],
      openSuspensions: [],
    }
    const result = parseHistorySnapshot(released, undefined, complete)
    expect(result.success).toBe(true)
    if (!result.success) return
    expect(result.value.derived).toBe(true)
    expect(result.value.messages.map((m) => [m.id, m.executionStatus])).toEqual([
      ['exec-1:user', 'cancelled'],
      ['e1:assistant', 'cancelled'],
      ['e2:user', 'running'],
      ['e2:assistant', 'running'],
      // No answer yet: n8n writes the assistant message with the first output.
      ['e3:user', 'running'],
    ])
    expect(result.value.activeExecutionId).toBe('e3')
    expect(
      parseHistorySnapshot({ messages: [], openSuspensions: [] }, undefined, complete),
    ).toEqual({
      success: true,
      value: { messages: [], openSuspensions: [], activeExecutionId: null, derived: true },
    })
  })

  it('refuses such a snapshot without the completion, saying which option reads it [R-RELEASED-PART]', () => {
    for (const body of [
      { messages: [], openSuspensions: [] },
      {
        messages: [{ ...userMessage, executionStatus: undefined }],
        openSuspensions: [],
        activeExecutionId: null,
      },
    ]) {
      const result = parseHistorySnapshot(body)
      expect(result.success).toBe(false)
      if (result.success) return
      expect(result.error.code).toBe('invalid_response')
      expect(result.error.message).toMatch(/released: releasedPlatform\(\)/)
    }
    // A complete one needs none, and is not marked derived.
    const full = parseHistorySnapshot({
      messages: [userMessage],
      openSuspensions: [],
      activeExecutionId: null,
    })
    expect(full.success && full.value.derived).toBe(undefined)
  })

  it('says where the snapshot is wrong', () => {
    const result = parseHistorySnapshot({
      ...snapshot,
      messages: [{ ...userMessage, role: 'system' }],
    })
    expect(!result.success && result.error.issues[0]).toMatch(/^messages\.0\.role: /)
  })
})

describe('parseHistorySnapshot with the last read (issue 15, win 1) [R-READ-IDENTITY]', () => {
  /** A fresh copy of the wire body, as every read gets from JSON.parse. */
  const wire = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown
  const read = (reuse: ReturnType<typeof createSnapshotReuse>, value: unknown) => {
    const result = parseHistorySnapshot(wire(value), reuse, complete)
    if (!result.success) throw result.error
    return result.value
  }

  it('takes the unchanged messages as the last read validated them (same objects), and validates the changed one', () => {
    const reuse = createSnapshotReuse()
    const first = read(reuse, snapshot)
    const changed = { ...assistantMessage, content: [{ type: 'text', text: 'Answer, longer' }] }
    const second = read(reuse, { ...snapshot, messages: [userMessage, changed] })
    expect(second.messages[0]).toBe(first.messages[0])
    expect(second.messages[1]).not.toBe(first.messages[1])
    expect(second.messages[1]).toEqual(changed)
    // A message that moved (one inserted before it) is found by its id.
    const inserted = { ...userMessage, id: 'exec-0:user', executionId: 'exec-0' }
    const third = read(reuse, { ...snapshot, messages: [inserted, userMessage, changed] })
    expect(third.messages[1]).toBe(first.messages[0])
    expect(third.messages[2]).toBe(second.messages[1])
  })

  it('still rejects a changed message that breaks the contract, naming its path', () => {
    const reuse = createSnapshotReuse()
    read(reuse, snapshot)
    const broken = { ...assistantMessage, content: [{ type: 'text', text: 7 }] }
    const result = parseHistorySnapshot(
      wire({ ...snapshot, messages: [userMessage, broken] }),
      reuse,
    )
    expect(result.success).toBe(false)
    if (result.success) return
    expect(result.error.code).toBe('invalid_response')
    expect(result.error.issues).toEqual([expect.stringMatching(/^messages\.1\.content\.0\.text: /)])
    // The failed read is not remembered: the next good one still reuses the first.
    const again = read(reuse, snapshot)
    expect(again.messages).toHaveLength(2)
  })

  it('validates again a message that carries fields the contract does not name (and strips them)', () => {
    const reuse = createSnapshotReuse()
    const first = read(reuse, snapshot)
    const second = read(reuse, {
      ...snapshot,
      messages: [{ ...userMessage, extra: 1 }, assistantMessage],
    })
    expect(second.messages[0]).not.toBe(first.messages[0])
    expect(second.messages[0]).toEqual(userMessage)
    expect(second.messages[1]).toBe(first.messages[1])
  })

  it('keeps the derived copies of the released n8n 2.41 while their status holds [R-N8N-HISTORY]', () => {
    const reuse = createSnapshotReuse()
    const user = { ...userMessage, executionStatus: undefined }
    const running = { ...assistantMessage, executionStatus: 'running' }
    const first = read(reuse, { messages: [user, running], openSuspensions: [] })
    const second = read(reuse, { messages: [user, running], openSuspensions: [] })
    expect(first.messages[0]?.executionStatus).toBe('running')
    expect(second.messages[0]).toBe(first.messages[0])
    const done = read(reuse, {
      messages: [user, { ...running, executionStatus: 'success' }],
      openSuspensions: [],
    })
    expect(done.messages[0]).not.toBe(first.messages[0])
    expect(done.messages[0]?.executionStatus).toBe('success')
  })
})
