/**
 * The alarm a step leaves (`alarmAfter`, in `postStep`), against the full computation: over random
 * action sequences, the alarm armed is never later than the next wake `nextWake` computes from the
 * whole state, is set exactly when there is one, and is that wake itself after every `tick`; a
 * `tick` that finds nothing due (an alarm that rang early) changes nothing but the alarm.
 */
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import type { TurnEvent } from '../wire/contract/events'
import type { HistorySnapshot } from '../wire/contract/snapshot'
import { errorRecord } from '../wire/contract/errors'
import type { EngineAction, EngineState } from '../engine/model'
import { initialEngineState, reduce, everyPart } from '../engine/reduce'
import { nextWake } from '../engine/schedule'
import { startTurn } from '../engine/fold'
import { silentOf } from '../engine/slices/released'
import {
  engineConfig as config,
  finishedTurn,
  key,
  messageIdOf,
  runningTurn,
  snapshot,
  readEmptyThread,
  streamingWithReadWanted,
  userMessage,
} from './harness'
import { assertSeeded } from './seeded'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

const parts = everyPart
const thread = JSON.stringify([key.projectId, key.agentId, key.threadId])

/**
 * One move of a run: an action made at the run's clock (`now`), or the clock moving on. A turn's
 * action names the last request's token (or the one before: a stream detached), and execution
 * ids come from a small set, so that moves meet the turns they name.
 */
type Move = { wait: number } | { act: (now: number, request: number) => EngineAction }

/** How far back from the last request a turn's action names its token. */
const token = fc.constantFrom(0, 0, 0, 1)
const execution = fc.constantFrom('e1', 'e2', 'eB')
const started = (executionId: string): TurnEvent => ({
  type: 'execution-started',
  executionId,
  sessionId: key.threadId,
})
const delta = (text: string): TurnEvent => ({ type: 'text-delta', id: 't1', delta: text })
const turnEvent = fc.oneof(
  execution.map((id): TurnEvent[] => [started(id)]),
  fc.constant<TurnEvent[]>([delta('ab'), delta('cd')]),
  execution.map((executionId): TurnEvent[] => [{ type: 'done', executionId }]),
  fc.constant<TurnEvent[]>([{ type: 'message-queued', queueId: '1', sessionId: key.threadId }]),
  fc.constant<TurnEvent[]>([{ type: 'error', errorCode: 'turn_already_running', message: 'busy' }]),
)
const shown = fc.oneof(
  fc.constant(snapshot([])),
  execution.map((executionId) => runningTurn({ executionId })),
  execution.map((executionId) => snapshot(finishedTurn(executionId, 'Q', 'A'))),
  // Released n8n: a person's message with no answer yet, its turn derived (a silent turn).
  execution.map((executionId): HistorySnapshot => ({
    ...snapshot([userMessage(executionId, 'Q', 'running')], executionId),
    derived: true,
  })),
)
const relayBody = fc.oneof(
  fc.boolean().map((active) => ({ kind: 'posting', active })),
  fc.constant({
    kind: 'turn',
    turn: startTurn({ executionId: 'eB', sessionId: key.threadId, message: 'B', createdAt: 'now' }),
    seq: 0,
  }),
  fc.constant({
    kind: 'events',
    executionId: 'eB',
    seq: 1,
    events: [{ type: 'done', executionId: 'eB' }],
  }),
)
const failure = fc.oneof(
  fc.constant(errorRecord('server_error', 'failed')),
  fc.constant(errorRecord('server_error', 'wait', { retryAfterMs: 3_000 })),
  fc.constant(errorRecord('not_found', 'missing')),
)

const act = (make: (now: number, request: number) => EngineAction): Move => ({ act: make })
const move: fc.Arbitrary<Move> = fc.oneof(
  // The common moves weigh more: the clock, the alarm, a delta of the last request's stream.
  {
    arbitrary: fc
      .constantFrom(0, 1, 100, 250, 1_000, 5_000, 30_000, 130_000)
      .map((wait) => ({ wait })),
    weight: 4,
  },
  { arbitrary: fc.constant(act((at) => ({ type: 'tick', at }))), weight: 3 },
  {
    arbitrary: fc.constant(
      act((at, request) => ({
        type: 'turn-events',
        token: request,
        events: [delta('abcde')],
        at,
        stampedAt: at,
      })),
    ),
    weight: 4,
  },
  fc.boolean().map((pushConnected) => act((at) => ({ type: 'activated', at, pushConnected }))),
  fc.constant(act(() => ({ type: 'deactivated' }))),
  fc.constant(
    act((at, request) => ({
      type: 'submit-requested',
      request: request + 1,
      messageId: messageIdOf(request + 1),
      text: 'Hi',
      at,
    })),
  ),
  fc.tuple(token, turnEvent).map(([back, events]) =>
    act((at, request) => ({
      type: 'turn-events',
      token: request - back,
      events,
      at,
      stampedAt: at,
    })),
  ),
  fc.tuple(token, fc.constantFrom('terminal', 'cut', 'aborted')).map(([back, kind]) =>
    act((_, request) => ({
      type: 'stream-ended',
      token: request - back,
      end:
        kind === 'cut'
          ? { kind, error: errorRecord('network_error', 'cut') }
          : { kind: kind as 'terminal' | 'aborted' },
    })),
  ),
  token.map((back) =>
    act((_, request) => ({
      type: 'post-failed',
      token: request - back,
      error: errorRecord('network_error', 'gone'),
    })),
  ),
  fc.boolean().map((urgent) => act(() => ({ type: 'read-wanted', urgent }))),
  fc.constant(act((at) => ({ type: 'read-started', at, fetch: 1 }))),
  shown.map((snap) =>
    act((at) => ({
      type: 'snapshot',
      snapshot: snap,
      fresh: true,
      fromRead: true,
      at,
      stampedAt: at,
      random: 0.5,
    })),
  ),
  failure.map((error) => act((at) => ({ type: 'read-failed', error, at, random: 0.5 }))),
  fc.constant(act(() => ({ type: 'read-cancelled', fetch: null }))),
  fc
    .boolean()
    .map((connected) => act((at) => ({ type: 'push-changed', connected, at, random: 0.5 }))),
  fc.constant(
    act(() => ({
      type: 'push-message',
      message: { type: 'agentExecutionUpdated', data: { ...key, executionId: 'e1' } },
    })),
  ),
  fc.constant(act((at, request) => ({ type: 'stop-requested', request: 1_000 + request, at }))),
  fc
    .tuple(execution, fc.boolean())
    .map(([executionId, cancelRequested]) =>
      act(() => ({ type: 'stop-answered', executionId, cancelRequested })),
    ),
  fc
    .tuple(execution, failure)
    .map(([executionId, error]) => act((at) => ({ type: 'stop-failed', executionId, error, at }))),
  relayBody.map((body) =>
    act((at) => ({
      type: 'relay-received',
      data: { v: 1, tab: 'B', thread, ...body },
      at,
      stampedAt: at,
    })),
  ),
  fc.constant(act(() => ({ type: 'draft-changed', draft: 'typed' }))),
)

/**
 * Where a run starts: a session not yet listened to, one that has read an empty thread, or one
 * whose own turn streams with a read wanted behind it (request 1).
 */
const openings: EngineAction[][] = [[], readEmptyThread(), streamingWithReadWanted()]

describe('the alarm a step leaves [R-ALARM-NEVER-LATE]', () => {
  it('is never later than the next wake, set exactly when there is one, and that wake after a tick', () => {
    const sizes: number[] = []
    const kinds = new Set<string>()
    let ticks = 0
    let idle = 0
    let early = 0
    /** Steps taken in each state a due time comes from. */
    const seen = { heldRead: 0, stop: 0, hold: 0, silent: 0, posting: 0 }
    assertSeeded(
      'alarm never late',
      fc.property(
        fc.constantFrom(...openings.keys()),
        fc.array(move, { maxLength: 80, size: 'max' }),
        (opening, moves) => {
          sizes.push(moves.length)
          let state: EngineState = initialEngineState({ key, tab: 'A' })
          for (const action of openings[opening]!) state = reduce(state, action, config).state
          let now = 0
          let request = opening === 2 ? 1 : 0
          for (const one of moves) {
            if ('wait' in one) {
              now += one.wait
              continue
            }
            const action = one.act(now, request)
            if (action.type === 'submit-requested') request = action.request
            kinds.add(action.type)
            if (
              state.own?.phase === 'streaming' &&
              state.reads.wanted &&
              action.type === 'turn-events'
            )
              seen.heldRead++
            if (state.stop) seen.stop++
            if (state.othersPosting) seen.hold++
            if (silentOf(state)) seen.silent++
            if (state.own?.phase === 'posting') seen.posting++
            const before = state
            const step = reduce(state, action, config)
            state = step.state
            // A tick that finds nothing due (an alarm that rang early) changes nothing but the alarm.
            const due = nextWake(before, config, parts)
            if (action.type === 'tick' && (due === null || action.at < due)) {
              idle++
              expect({ ...state, wakeAt: null }).toEqual({ ...before, wakeAt: null })
              expect(step.commands.every((command) => command.type === 'set-alarm')).toBe(true)
            }
            const wake = nextWake(state, config, parts)
            if (wake === null) expect(state.wakeAt).toBeNull()
            else {
              expect(state.wakeAt).not.toBeNull()
              expect(state.wakeAt!).toBeLessThanOrEqual(wake)
            }
            if (action.type === 'tick') {
              ticks++
              expect(state.wakeAt).toBe(wake)
            } else if (wake !== null && state.wakeAt! < wake) early++
          }
        },
      ),
      { numRuns: 300 },
    )
    // What the generator really produced (not the maximum asked for).
    console.log(
      `[property] alarm never late: ${sizes.length} runs of 0–${Math.max(...sizes)} moves ` +
        `(${sizes.reduce((a, b) => a + b, 0)} in all), ${kinds.size} action types, ${ticks} ticks (${idle} finding nothing due), ` +
        `${early} steps left an alarm earlier than the wake; steps from states with a due time: ` +
        JSON.stringify(seen),
    )
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(0)
    expect(Math.max(...sizes)).toBeGreaterThan(60)
    expect(early).toBeGreaterThan(0)
    expect(idle).toBeGreaterThan(0)
  })
})
