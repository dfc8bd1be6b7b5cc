/**
 * One fold (issue 11, row e): for any script of turn events — text, reasoning, tool calls and tool
 * errors, delegations with child reasoning and renamed steps, suspensions, a Stop at any point —
 * what a client shows live equals what the reference server records, timestamps aside. Both run
 * core's `applyTurnEvent`; this suite checks it end to end, through the wire and the parsers.
 */
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { assertSeeded } from './seeded'
// A relative import keeps the workspace free of a core ⇄ server dependency cycle (test-only).
import { createPreviewChatBackend, type PreviewChatAgent } from '../../../server/src/index'
import type { SubagentChunk, TurnEvent } from '../contract'
import { createPreviewChatClient, type MessagePart } from '../index'
import { applyTurnEvents, startTurn } from '../engine/fold'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

const limit = 30 // a small delegation budget, so that truncation happens often

/** One step of a generated script: a few wire events, or the point where the person presses Stop. */
type Step = { events: TurnEvent[] } | { stop: true }

const textId = fc.constantFrom('t1', 't2')
const toolId = fc.constantFrom('c1', 'c2', 'c3')
const words = fc.string({ minLength: 1, maxLength: 12 })

const childChunk: fc.Arbitrary<SubagentChunk> = fc.oneof(
  words.map((delta) => ({ type: 'text-delta' as const, delta })),
  fc.constant({ type: 'reasoning-start' as const }),
  words.map((delta) => ({ type: 'reasoning-delta' as const, delta })),
  fc.constant({ type: 'reasoning-end' as const }),
  fc
    .tuple(fc.constantFrom('s1', 's2'), fc.constantFrom('search', 'browse'))
    .map(([toolCallId, toolName]) => ({ type: 'tool-input-start' as const, toolCallId, toolName })),
  fc
    .tuple(fc.constantFrom('s1', 's2'), fc.constantFrom('search', 'browse'))
    .map(([toolCallId, toolName]) => ({
      type: 'tool-execution-start' as const,
      toolCallId,
      toolName,
      startTime: 1,
    })),
  fc.tuple(fc.constantFrom('s1', 's2'), fc.boolean()).map(([toolCallId, isError]) => ({
    type: 'tool-execution-end' as const,
    toolCallId,
    toolName: 'search',
    isError,
    endTime: 2,
  })),
)

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(textId, words)
      .map(([id, delta]) => ({ events: [{ type: 'text-delta' as const, id, delta }] })),
  },
  fc.tuple(textId, words).map(([id, delta]) => ({
    events: [
      { type: 'reasoning-start' as const, id },
      { type: 'reasoning-delta' as const, id, delta },
      { type: 'reasoning-end' as const, id },
    ],
  })),
  toolId.map((toolCallId) => ({
    events: [
      { type: 'tool-input-start' as const, toolCallId, toolName: 'lookup' },
      { type: 'tool-call' as const, toolCallId, toolName: 'lookup', input: { q: toolCallId } },
      { type: 'tool-execution-start' as const, toolCallId, toolName: 'lookup', startTime: 10 },
    ],
  })),
  fc
    .tuple(toolId, fc.boolean(), fc.oneof(fc.string(), fc.record({ reason: fc.string() })))
    .map(([toolCallId, isError, output]) => ({
      events: [
        {
          type: 'tool-execution-end' as const,
          toolCallId,
          toolName: 'lookup',
          isError,
          endTime: 20,
        },
        { type: 'tool-result' as const, toolCallId, toolName: 'lookup', output, isError },
      ],
    })),
  fc
    .tuple(fc.constantFrom('d1', 'd2'), fc.array(childChunk, { minLength: 1, maxLength: 4 }))
    .map(([parentToolCallId, chunks]) => ({
      events: chunks.map((chunk) => ({
        type: 'subagent-chunk' as const,
        parentToolCallId,
        taskPath: 'delegate',
        chunk,
      })),
    })),
  { weight: 1, arbitrary: fc.constant({ stop: true as const }) },
)

const ending = fc.constantFrom('done', 'error', 'suspended')

/** Drops what only a clock decides: reasoning times, the client's and the server's. */
function withoutClockTimes(parts: readonly MessagePart[]): unknown {
  return JSON.parse(
    JSON.stringify(parts, (key, value: unknown) =>
      key === 'startTime' || key === 'endTime'
        ? typeof value === 'number' && value < 100
          ? value
          : undefined
        : value,
    ),
  )
}

async function run(steps: Step[], end: 'done' | 'error' | 'suspended') {
  let reachStop: () => Promise<void> = async () => {}
  const agent: PreviewChatAgent = async (_input, context) => {
    for (const current of steps) {
      await context.pause()
      if ('stop' in current) await reachStop()
      else for (const event of current.events) context.emit(event)
    }
    await context.pause()
    if (end === 'error')
      return { kind: 'error', message: 'The model failed.', errorCode: 'model_error' }
    if (end === 'suspended')
      return {
        kind: 'suspended',
        payload: { toolCallId: 'c9', runId: 'run-1', toolName: 'approve', input: { ask: true } },
      }
    return { kind: 'done' }
  }
  const backend = createPreviewChatBackend({
    dev: true,
    agent,
    deltaMs: 0,
    snapshotMs: 2,
    delegationCharLimit: limit,
  })
  const client = createPreviewChatClient({
    fetch: (input, init) =>
      backend.fetch(new Request(new URL(String(input), 'http://localhost'), init)),
    headers: { authorization: 'Bearer alice' },
    push: {
      subscribe(listener) {
        queueMicrotask(() => listener.onConnectionChange?.(true))
        return backend.subscribePush('alice', (message) => listener.onMessage(message))
      },
    },
    storage: null,
    relay: false,
    lingerMs: 0,
    minReadIntervalMs: 0,
    delegationCharLimit: limit,
    resumeSignal: () => () => {},
  })
  const session = client.session({
    projectId: 'p',
    agentId: 'a',
    threadId: crypto.randomUUID(),
    isNew: true,
  })
  reachStop = async () => {
    await session.stop()
  }
  let liveAtEnd: readonly MessagePart[] | null = null
  const unsubscribe = session.subscribe(() => {
    const live = session.getEngineState().live
    if (live?.ended && liveAtEnd === null) liveAtEnd = live.assistant.content
  })
  session.setDraft('go')
  const accepted = await session.submit()
  expect(accepted.outcome).toBe('accepted')
  const started = Date.now()
  while (
    backend.inspect.running().length > 0 ||
    session.getState().status !== 'idle' ||
    session.getEngineState().live !== null
  ) {
    if (Date.now() - started > 3_000)
      throw new Error(`did not converge: ${JSON.stringify(session.getEngineState())}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  const recorded = session.getState().messages.at(-1)
  unsubscribe()
  session.dispose()
  await backend.close()
  return { liveAtEnd, recorded }
}

describe('one fold for the live and the recorded view (property suite, real backend) [R-FOLD-ONE]', () => {
  it('the parts shown live equal the parts recorded, for any script and a Stop at any point', async () => {
    await assertSeeded(
      'fold.property',
      fc.asyncProperty(fc.array(step, { maxLength: 14 }), ending, async (steps, end) => {
        const { liveAtEnd, recorded } = await run(steps, end)
        expect(liveAtEnd).not.toBeNull()
        expect(withoutClockTimes(liveAtEnd ?? [])).toEqual(
          withoutClockTimes(recorded?.content ?? []),
        )
      }),
      { numRuns: 60, endOnFailure: true },
    )
  }, 60_000)
})

describe('one delta join (issue 36): a batch folds as its events one by one [R-FOLD-ONE]', () => {
  it('applyTurnEvents of any batch equals applying each event alone, deltas of any streams interleaved', () => {
    const sizes: number[] = []
    const event: fc.Arbitrary<TurnEvent> = fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .tuple(textId, words)
          .map(([id, delta]) => ({ type: 'text-delta' as const, id, delta })),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(textId, words)
          .map(([id, delta]) => ({ type: 'reasoning-delta' as const, id, delta })),
      },
      textId.map((id) => ({ type: 'text-start' as const, id })),
      textId.map((id) => ({ type: 'reasoning-start' as const, id })),
      textId.map((id) => ({ type: 'reasoning-end' as const, id })),
      toolId.map((toolCallId) => ({
        type: 'tool-input-start' as const,
        toolCallId,
        toolName: 'search',
      })),
      fc.constant({ type: 'done' as const }),
    )
    const options = { delegationCharLimit: limit, now: () => '2026-12-05T10:00:00.000Z' }
    const begin = () =>
      startTurn({
        executionId: 'e1',
        sessionId: 's1',
        message: 'Q',
        createdAt: '2026-12-05T10:00:00.000Z',
      })
    assertSeeded(
      'one delta join',
      fc.property(fc.array(event, { maxLength: 40, size: 'max' }), (events) => {
        sizes.push(events.length)
        let alone = begin()
        for (const one of events) alone = applyTurnEvents(alone, [one], options)
        expect(applyTurnEvents(begin(), events, options)).toEqual(alone)
      }),
      { numRuns: 300 },
    )
    // What the generator really produced (not the maximum asked for).
    console.log(
      `[property] one delta join: ${sizes.length} batches of 0–${Math.max(...sizes)} events`,
    )
    expect(Math.max(...sizes)).toBeGreaterThan(10)
  })
})
