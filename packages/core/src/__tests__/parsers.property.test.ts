/**
 * No parser throws, whatever JSON arrives (rule: anything from outside is parsed, never trusted).
 * Every parser of the wire contract and of the tab relay gets arbitrary JSON values, and valid
 * messages with one node replaced by a prototype-hostile value (`toString`/`valueOf` that are not
 * functions, `__proto__` and `constructor` keys), as `JSON.parse` gives them.
 */
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { parseRelayMessage } from '../engine/relay'
import {
  errorFromResponse,
  parseChatRequest,
  parseHistorySnapshot,
  parsePushMessage,
  parseRestError,
  parseResumeRequest,
  parseRunCancelAnswer,
  parseStopAnswer,
  parseTurnEvent,
  turnEventFrom,
} from '../wire/contract'
import { readDeltaEvent } from '../wire/contract/events'
import { createSnapshotReuse } from '../wire/contract/snapshot'
import { assertSeeded } from './seeded'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

const hostileKeys = ['toString', 'valueOf', '__proto__', 'constructor', 'hasOwnProperty', 'type']
const hostileLeaf = fc.oneof(
  fc.constant(null),
  fc.constant({ toString: null }),
  fc.constant({ valueOf: null, toString: null }),
  fc.constant({ toString: 1, valueOf: {} }),
  fc.constant({ type: { toString: null } }),
  fc.constant({ __proto__: null }),
  fc.constant({ constructor: null }),
  fc.constant([{ toString: null }]),
  fc.constantFrom('toString', '__proto__', 'constructor', 'valueOf', ''),
  fc.double(),
  fc.integer(),
  fc.boolean(),
)

/** JSON text of any shape, with hostile keys among the ordinary ones. */
const { json: jsonText } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    hostileLeaf.map((value) => JSON.stringify(value)),
    fc.array(tie('json'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(fc.oneof(fc.constantFrom(...hostileKeys), fc.string()), tie('json')), {
        maxLength: 5,
      })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
}))
const anyJson = jsonText.map((text) => JSON.parse(text) as unknown)

const validEvents: unknown[] = [
  { type: 'execution-started', executionId: 'e1', sessionId: 't1' },
  { type: 'text-delta', id: 'x', delta: 'Hi' },
  {
    type: 'subagent-chunk',
    parentToolCallId: 'c1',
    taskPath: 'a',
    chunk: { type: 'text-delta', delta: 'x' },
  },
  {
    type: 'tool-call-suspended',
    payload: { toolCallId: 'c', runId: 'r', toolName: 'n', input: {} },
  },
  { type: 'done', executionId: 'e1' },
  { type: 'error', message: 'x', errorCode: 'turn_already_running' },
]
const message = {
  id: 'e1:assistant',
  role: 'assistant',
  executionId: 'e1',
  executionStatus: 'running',
  createdAt: '2026-12-01T00:00:00Z',
  content: [
    { type: 'text', text: 'Hi' },
    {
      type: 'tool-call',
      toolName: 'n',
      toolCallId: 'c',
      childTrace: { text: '', reasoningSegments: [], steps: [] },
    },
  ],
}
const snapshot = {
  messages: [message],
  openSuspensions: [{ toolCallId: 'c', runId: 'r' }],
  activeExecutionId: 'e1',
}
const relayTurn = {
  v: 1,
  tab: 'B',
  thread: '["p1","a1","t1"]',
  kind: 'turn',
  seq: 0,
  turn: {
    executionId: 'e1',
    sessionId: 't1',
    user: null,
    assistant: message,
    streams: { 'text:x': 0 },
    delegations: {},
    resumes: null,
    ended: false,
  },
}
const relayEvents = {
  v: 1,
  tab: 'B',
  thread: 't',
  kind: 'events',
  executionId: 'e1',
  seq: 1,
  events: validEvents,
}

/** `value` with the node at a chosen place replaced by `replacement`. */
function replaceAt(value: unknown, pick: number, replacement: unknown): unknown {
  let counter = pick
  const walk = (node: unknown): unknown => {
    if (counter-- === 0) return replacement
    if (Array.isArray(node)) return node.map(walk)
    if (node !== null && typeof node === 'object')
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]))
    return node
  }
  return walk(value)
}
const mutated = (seed: unknown) =>
  fc.tuple(fc.nat({ max: 40 }), anyJson, fc.boolean()).map(([pick, replacement, asText]) => {
    const value = replaceAt(seed, pick, replacement)
    // Round-tripped through JSON text, so that `__proto__` is an own key, as on the wire.
    return asText ? (JSON.parse(JSON.stringify(value)) as unknown) : value
  })

const inputs = fc.oneof(anyJson, ...[...validEvents, snapshot, relayTurn, relayEvents].map(mutated))

/** Every parser, on one value. */
function parseAll(value: unknown) {
  const text = JSON.stringify(value) ?? 'null'
  turnEventFrom(value)
  parseTurnEvent(text)
  parseHistorySnapshot(value)
  parseHistorySnapshot(value, createSnapshotReuse())
  parsePushMessage(text)
  parseRelayMessage(value)
  parseChatRequest(value)
  parseResumeRequest(value)
  parseStopAnswer(value)
  parseRunCancelAnswer(value)
  parseRestError(value)
  errorFromResponse(500, value, 'A request')
}

describe('no parser throws, for any JSON value [R-WIRE-PARSERS-TOTAL R-RELAY-PARSED]', () => {
  it('the seed that found the subagent-chunk throw stays as an example', () => {
    // Seed 181244184 of the bench's differential test: a chunk type with a null toString.
    const found = {
      type: 'subagent-chunk',
      parentToolCallId: 'c',
      taskPath: 'a',
      chunk: { type: { toString: null } },
    }
    expect(turnEventFrom(found)).toMatchObject({ kind: 'ignored' })
    expect(() => parseAll(found)).not.toThrow()
  })

  it('turn events, snapshots, push, relay and REST bodies, over arbitrary and mutated JSON', async () => {
    await assertSeeded(
      'no parser throws',
      fc.property(inputs, (value) => {
        parseAll(value)
      }),
      { numRuns: 3_000 },
    )
  })
})

describe('a delta read in place reads what the general parsers read (issue 36) [R-WIRE-ONE-PARSE]', () => {
  /** What `JSON.parse` and the event parsers make of `data`, as a delta, or `undefined`. */
  const generally = (data: string) => {
    const parsed = parseTurnEvent(data)
    return parsed.kind === 'event' &&
      (parsed.event.type === 'text-delta' || parsed.event.type === 'reasoning-delta')
      ? parsed.event
      : undefined
  }
  // Strings with what JSON must escape or refuse: quotes, backslashes, control characters,
  // lone surrogates, and the delimiters of the form itself.
  const tricky = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 12 }),
    fc.constantFrom('', '"', '\\', '\n', '","delta":', '}', '\u2028', '\ud800', 'a"b', '\\"'),
  )
  const type = fc.constantFrom('text-delta', 'reasoning-delta')

  it('the servers’ form of any delta is read in place, and equals the general reading', () => {
    const read = { inPlace: 0, total: 0 }
    assertSeeded(
      'delta in place, servers’ form',
      fc.property(type, tricky, tricky, (type, id, delta) => {
        const data = JSON.stringify({ type, id, delta })
        const inPlace = readDeltaEvent(data)
        read.total++
        if (inPlace) read.inPlace++
        expect(inPlace ?? generally(data)).toEqual({ type, id, delta })
        // An id JSON writes as it is (no escape) is read in place, whatever the delta holds.
        if (JSON.stringify(id) === `"${id}"`) expect(inPlace).toEqual({ type, id, delta })
      }),
      { numRuns: 2_000 },
    )
    console.log(`[property] delta in place: ${read.inPlace} of ${read.total} read in place`)
    expect(read.inPlace).toBeGreaterThan(read.total / 2)
  })

  it('any other text is either refused (the general way decides) or read as the general way reads it', () => {
    const counts = { inPlace: 0, total: 0 }
    const nearForm = fc
      .tuple(type, tricky, tricky, fc.constantFrom('', ' ', ',"x":1', ',"delta":"y"', '"', '\\'))
      .chain(([type, id, delta, extra]) =>
        fc.constantFrom(
          `{"type":"${type}","id":"${id}","delta":"${delta}"${extra}}`,
          `{"type":"${type}","id":${JSON.stringify(id)},"delta":${JSON.stringify(delta)}${extra}}`,
          `{"type":"${type}","id":"${id}","delta":${JSON.stringify(delta)}}${extra}`,
          `{"type":"${type}", "id":"${id}","delta":"${delta}"}`,
        ),
      )
    assertSeeded(
      'delta in place, other text',
      fc.property(fc.oneof(nearForm, jsonText), (data) => {
        counts.total++
        const inPlace = readDeltaEvent(data)
        if (inPlace === undefined) return
        counts.inPlace++
        expect(inPlace).toEqual(generally(data))
      }),
      { numRuns: 3_000 },
    )
    console.log(
      `[property] delta in place, other text: ${counts.inPlace} of ${counts.total} read in place`,
    )
    expect(counts.inPlace).toBeGreaterThan(0)
  })
})
