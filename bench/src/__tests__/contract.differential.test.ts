/**
 * The wire contract's parsers against the valibot parsers they replaced (321d346, kept in
 * src/before for win 3): over mutations of a rich snapshot and of every turn event shape, both
 * accept the same inputs and give the same output. Error messages differ in wording (valibot's
 * own), so a refusal is compared by its code. Outputs are compared strictly: a field the input
 * leaves out must be left out, not set to `undefined`.
 */
import {
  completeReleasedSnapshot,
  createSnapshotReuse,
  parseHistorySnapshot,
  parseTurnEvent,
  type HistorySnapshot,
} from '@preview-chat/core/contract'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { eachSeed } from '../../../scripts/seeds.mjs'
import { parseTurnEvent as parseTurnEventBefore } from '../before/events'
import { parseHistorySnapshot as parseHistorySnapshotBefore } from '../before/snapshot'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

const runs = 5_000

/** The command that replays `seed` of this file's property runs. */
const replay = (seed: number) =>
  `PREVIEW_CHAT_SEED=${seed} npx vitest run --project bench src/__tests__/contract.differential.test.ts`

type Json = null | boolean | number | string | undefined | Json[] | { [key: string]: Json }

/** One change to a JSON value: where (an index into its nodes, all equally likely), what, with what. */
interface Mutation {
  at: number
  kind: 'replace' | 'remove' | 'add-field' | 'retype' | 'append' | 'duplicate'
  value: Json
}

const leaf: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null,
    true,
    0,
    -1,
    1.5,
    Number.NaN,
    '',
    'x',
    'text',
    'file',
    'tool-call',
    'reasoning',
    'user',
    'assistant',
    'running',
    'success',
    'resolved',
    'rejected',
    'text-delta',
    'reasoning-start',
    'tool-execution-end',
    'done',
    // Names every object inherits: a `type` must be an own key of the schemas, never these.
    'toString',
    '__proto__',
    'constructor',
    'hasOwnProperty',
    undefined,
    [],
    {},
  ),
  fc.string({ maxLength: 4 }),
  fc.double(),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
)

const mutations = fc.array(
  fc.record({
    at: fc.nat(),
    kind: fc.constantFrom<Mutation['kind']>(
      'replace',
      'remove',
      'add-field',
      'retype',
      'append',
      'duplicate',
    ),
    value: leaf,
  }),
  { minLength: 1, maxLength: 3 },
)

type Container = Json[] | { [key: string]: Json }
const isObject = (value: Json): value is { [key: string]: Json } =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Every node below the root, as its container and key. */
function nodes(value: Json, into: [Container, string | number][] = []) {
  if (Array.isArray(value))
    value.forEach((item, index) => {
      into.push([value, index])
      nodes(item, into)
    })
  else if (isObject(value))
    for (const [key, item] of Object.entries(value)) {
      into.push([value, key])
      nodes(item, into)
    }
  return into
}

/**
 * `seed` with the mutations applied, on a copy. Each change's value goes in as a copy too: fast-check
 * hands the same object to several changes, and one inserted by reference could be given a field
 * that is itself (a cycle no wire message can carry; seeds -1513240550 and -2019841289 found that).
 */
function mutate(seed: Json, mutations: Mutation[]): Json {
  const root: Json[] = [structuredClone(seed)]
  for (const mutation of mutations) {
    const change = { ...mutation, value: structuredClone(mutation.value) }
    const places = nodes(root)
    const [parent, key] = places[change.at % places.length] as [Container, string | number]
    const node = (parent as Record<string | number, Json>)[key] as Json
    switch (change.kind) {
      case 'replace':
        ;(parent as Record<string | number, Json>)[key] = change.value
        break
      case 'remove':
        if (parent === root) root[0] = undefined
        else if (Array.isArray(parent)) parent.splice(Number(key), 1)
        else Reflect.deleteProperty(parent, key)
        break
      case 'add-field':
        if (isObject(node)) node[`extra${change.at % 7}`] = change.value
        break
      case 'retype':
        if (isObject(node)) node.type = change.value
        break
      case 'append':
        if (Array.isArray(node))
          node.push(isObject(change.value) ? change.value : { type: change.value })
        break
      case 'duplicate':
        if (Array.isArray(node) && node.length > 0) node.push(structuredClone(node[0]))
        break
    }
  }
  return root[0]
}

const chunks: Json[] = [
  { type: 'text-delta', delta: 'x' },
  { type: 'reasoning-start' },
  { type: 'reasoning-delta', delta: 'y' },
  { type: 'reasoning-end' },
  { type: 'tool-input-start', toolCallId: 'c', toolName: 'n' },
  { type: 'tool-execution-start', toolCallId: 'c', toolName: 'n', startTime: 's' },
  { type: 'tool-execution-end', toolCallId: 'c', toolName: 'n', isError: true, endTime: 2 },
]
const eventSeeds: Json[] = [
  { type: 'execution-started', executionId: 'e', sessionId: 's' },
  { type: 'start-step' },
  { type: 'finish-step' },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'd' },
  { type: 'text-end', id: 't' },
  { type: 'reasoning-start', id: 'r' },
  { type: 'reasoning-delta', id: 'r', delta: 'd' },
  { type: 'reasoning-end', id: 'r' },
  { type: 'tool-input-start', toolCallId: 'c', toolName: 'n' },
  { type: 'tool-input-delta', toolCallId: 'c', delta: '{' },
  { type: 'tool-call', toolCallId: 'c', toolName: 'n', input: { q: 1 } },
  { type: 'tool-execution-start', toolCallId: 'c', toolName: 'n', startTime: 1 },
  { type: 'tool-execution-end', toolCallId: 'c', toolName: 'n', isError: false, endTime: 'x' },
  {
    type: 'tool-result',
    toolCallId: 'c',
    toolName: 'n',
    output: [1],
    isError: true,
    canceled: false,
  },
  {
    type: 'tool-call-suspended',
    payload: { toolCallId: 'c', runId: 'r', toolName: 'n', input: null },
  },
  ...chunks.map((chunk) => ({
    type: 'subagent-chunk',
    parentToolCallId: 'p',
    taskPath: 'a/b',
    chunk,
  })),
  { type: 'warning', message: 'm', code: 'c' },
  { type: 'error', message: 'm', errorCode: 'turn_already_running' },
  { type: 'done', sessionId: 's', executionId: 'e' },
  { type: 'done' },
]

const snapshotSeed: Json = {
  messages: [
    {
      id: 'e1:user',
      role: 'user',
      content: [{ type: 'text', text: 'Hi' }],
      executionId: 'e1',
      executionStatus: 'success',
      createdAt: '2026-11-30T09:00:00.000Z',
    },
    {
      id: 'e1:assistant',
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'thinking', startTime: 1, endTime: 'x' },
        { type: 'tool-call', toolName: 's', toolCallId: 'c1', input: { q: 'x' } },
        {
          type: 'tool-call',
          toolName: 's',
          toolCallId: 'c2',
          input: null,
          state: 'rejected',
          output: { r: [] },
          error: 'denied',
          startTime: 1,
          endTime: 2,
          suspendPayload: { q: 1 },
        },
        {
          type: 'tool-call',
          toolName: 'delegate',
          toolCallId: 'c3',
          input: {},
          state: 'resolved',
          childTrace: {
            text: 't',
            reasoningSegments: [
              { id: 's1', content: 'c', startTime: 1, endTime: 2 },
              { id: 's2', content: '' },
            ],
            steps: [{ toolCallId: 'cc', toolName: 'f', running: false }],
          },
        },
        {
          type: 'file',
          fileId: 'f1',
          fileName: 'a.pdf',
          mimeType: 'application/pdf',
          sizeBytes: 1024,
        },
        { type: 'text', text: 'Answer' },
      ],
      executionId: 'e1',
      executionStatus: 'error',
      executionError: 'boom',
      createdAt: '2026-11-30T09:00:01.000Z',
    },
    {
      id: 'e2:user',
      role: 'user',
      content: [{ type: 'text', text: 'Again' }],
      executionId: 'e2',
      createdAt: '2026-11-30T09:01:00.000Z',
    },
    {
      id: 'e2:assistant',
      role: 'assistant',
      content: [{ type: 'text', text: 'A' }],
      executionId: 'e2',
      executionStatus: 'running',
      createdAt: '2026-11-30T09:01:01.000Z',
    },
  ],
  openSuspensions: [
    { toolCallId: 'c2', runId: 'r', suspendPayload: { a: 1 } },
    { toolCallId: 'c', runId: 'r' },
  ],
  activeExecutionId: 'e2',
}
const snapshotSeeds: Json[] = [
  snapshotSeed,
  { data: snapshotSeed },
  { ...(snapshotSeed as object), activeExecutionId: undefined },
  { ...(snapshotSeed as object), activeExecutionId: null },
]

const THREW = Symbol('threw')
/**
 * The parser before, or `THREW`: it threw on a type that is an object whose `toString` is no
 * function (`String()` of it), a fault the parsers of today do not have (issue 19, row j).
 */
function beforeOrThrew<T>(parse: () => T): T | typeof THREW {
  try {
    return parse()
  } catch (error) {
    if (error instanceof TypeError && /convert object to primitive/.test(error.message))
      return THREW
    throw error
  }
}

/** A body as a read gives it: what `JSON.parse` makes of the mutated value (no `undefined`). */
const asRead = (value: Json): unknown => JSON.parse(JSON.stringify(value) ?? 'null')

/** What both parsers must agree on: acceptance, the value, and a refusal's code. */
const outcome = (
  result: { success: true; value: HistorySnapshot } | { success: false; error: { code: string } },
) => (result.success ? { value: result.value } : { refused: result.error.code })

describe('the contract parsers against the valibot parsers they replaced (win 3) [R-WIRE-DIFFERENTIAL]', () => {
  it('read every mutated turn event alike: the same event, the same tolerance, the same refusals', () => {
    let accepted = 0
    // The seeds that found something are in scripts/seeds.json, e.g. 1056953362: a chunk type
    // `{ "toString": false }`, on which the parser before threw (issue 19, row j); the parser now
    // ignores it as a chunk of an unknown type.
    eachSeed(
      'mutated turn events',
      (runSeed) =>
        fc.assert(
          fc.property(fc.constantFrom(...eventSeeds), mutations, (seed, changes) => {
            const data = JSON.stringify(mutate(seed, changes)) ?? 'null'
            const now = parseTurnEvent(data)
            if (now.kind === 'event') accepted++
            const before = beforeOrThrew(() => parseTurnEventBefore(data))
            if (before === THREW) {
              // Only where the type is no string, which the parser before turned into one.
              expect(now.kind).toBe('ignored')
              return
            }
            expect(now.kind).toBe(before.kind)
            if (now.kind === 'event' && before.kind === 'event')
              expect(now.event).toStrictEqual(before.event)
            if (now.kind === 'ignored' && before.kind === 'ignored')
              expect(now.type).toBe(before.type)
            if (now.kind === 'invalid' && before.kind === 'invalid')
              expect(now.error.code).toBe(before.error.code)
          }),
          { numRuns: runs, seed: runSeed },
        ),
      replay,
    )
    // Both sides were tried: a fair share of the mutations is still valid.
    expect(accepted).toBeGreaterThan(runs / 10)
  })

  it('read every mutated snapshot alike, also when a read reuses the last one (win 1)', () => {
    let accepted = 0
    eachSeed(
      'mutated snapshots',
      (runSeed) =>
        fc.assert(
          fc.property(
            fc.constantFrom(...snapshotSeeds),
            mutations,
            mutations,
            (seed, first, second) => {
              const reuse = createSnapshotReuse()
              for (const body of [asRead(mutate(seed, first)), asRead(mutate(seed, second))]) {
                // The parsers before derived what the released n8n 2.41 leaves out; now the
                // completion does, which `releasedPlatform()` gives a client (issue 36).
                const now = parseHistorySnapshot(body, reuse, completeReleasedSnapshot)
                if (now.success) accepted++
                expect(outcome(now)).toStrictEqual(outcome(parseHistorySnapshotBefore(body)))
              }
            },
          ),
          { numRuns: runs, seed: runSeed },
        ),
      replay,
    )
    expect(accepted).toBeGreaterThan(runs / 10)
  })
})
