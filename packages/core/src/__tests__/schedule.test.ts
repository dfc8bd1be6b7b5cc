/** The scheduler on its own: pure functions of the engine state and the time. */
import { describe, expect, it } from 'vitest'
import { PreviewChatError } from '../wire/contract/errors'
import type { EngineAction, EngineState } from '../engine/model'
import { initialEngineState, reduce, everyPart } from '../engine/reduce'
import { LAGGING_RECORD_POLLS, nextDeadline, nextRead, nextWake } from '../engine/schedule'
import { startTurn } from '../engine/fold'
import { AT_ONCE, followUp } from '../engine/slices/reads'
import {
  key,
  runningTurn,
  engineConfig,
  snapshot as snapshotOf,
  streamingWithReadWanted,
} from './harness'

const config = engineConfig

const active = (patch: Partial<EngineState> = {}): EngineState => ({
  ...reduce(
    initialEngineState({ key, tab: 'A', isNew: true }),
    { type: 'activated', at: 0, pushConnected: true },
    config,
  ).state,
  ...patch,
})
const reads = (state: EngineState, patch: Partial<EngineState['reads']>): EngineState => ({
  ...state,
  reads: { ...state.reads, ...patch },
})

describe('nextRead: when a read starts', () => {
  it('never while the session is quiet, nor while a read is in flight [R-READ-COALESCE]', () => {
    expect(
      nextRead({ ...active(), active: false, reads: { ...active().reads, wanted: true } }, config),
    ).toBeNull()
    expect(nextRead(reads(active(), { wanted: true, inFlight: true }), config)).toBeNull()
  })

  it('a wanted read starts minReadIntervalMs after the last one began, or at once when urgent [R-READ-COALESCE]', () => {
    const state = reads(active(), { wanted: true, lastStartedAt: 1_000 })
    expect(nextRead(state, config)).toBe(1_250)
    expect(nextRead(reads(state, { urgent: true }), config)).toBe(AT_ONCE)
  })

  it("never before the server's Retry-After [R-READ-RETRY-AFTER]", () => {
    const state = reads(active(), { wanted: true, urgent: true, notBefore: 9_000 })
    expect(nextRead(state, config)).toBe(9_000)
  })

  it('a retry or a poll starts at its follow-up time [R-READ-BACKOFF]', () => {
    expect(nextRead(reads(active(), { followUpAt: 4_000 }), config)).toBe(4_000)
    expect(nextRead(active(), config)).toBeNull()
  })

  it("this tab's own stream holds reads back until it is silent for streamSilenceMs [R-READ-DEFER-OWN]", () => {
    const own = {
      token: 1,
      text: 'Q',
      resuming: null,
      phase: 'streaming' as const,
      since: 0,
      lastEventAt: 2_000,
      timedOut: false,
      settled: true,
      batches: 3,
      request: { kind: 'message' as const, body: { message: 'Q' } },
      attempts: 1,
    }
    const streaming = reads(active({ own }), { wanted: true })
    expect(nextRead(streaming, config)).toBe(7_000)
    // An accepted Stop: completion comes from the record, so nothing holds reads back.
    const stopped: EngineState = {
      ...streaming,
      stop: {
        kind: 'execution',
        executionId: 'e1',
        accepted: true,
        attempts: 1,
        retryAt: null,
        askedAt: 0,
        afterRead: 0,
        waiters: [],
      },
    }
    expect(nextRead(stopped, config)).toBe(AT_ONCE)
    // A POST that timed out holds nothing back either.
    expect(nextRead({ ...streaming, own: { ...own, timedOut: true } }, config)).toBe(AT_ONCE)
  })
})

describe('nextDeadline', () => {
  it('is the earliest of a posted message waiting for acceptance and a held Stop [R-POST-TIMEOUT R-STOP-HELD]', () => {
    const own = {
      token: 1,
      text: 'Q',
      resuming: null,
      phase: 'posting' as const,
      since: 100,
      lastEventAt: 100,
      timedOut: false,
      settled: false,
      batches: 0,
      request: { kind: 'message' as const, body: { message: 'Q' } },
      attempts: 1,
    }
    expect(nextDeadline(active({ own }), config)).toBe(30_100)
    const stop = { kind: 'held' as const, token: 1, askedAt: 200, waiters: [] }
    expect(nextDeadline(active({ own, stop }), config)).toBe(10_200)
    expect(nextDeadline(active(), config)).toBeNull()
  })
})

describe('followUp: retries and polls [R-READ-BACKOFF]', () => {
  const failed = (failures: number, running: boolean) =>
    reads(
      active({
        recorded: running ? runningTurn() : null,
        readError: new PreviewChatError('server_error', 'failed'),
      }),
      { failures },
    )

  it('retries a failed read with doubling backoff while a turn runs, without end', () => {
    // Jitter at its top (random 1): base, then twice, up to the bound.
    expect(followUp(failed(1, true), 0, 1, config).reads.followUpAt).toBe(500)
    expect(followUp(failed(2, true), 0, 1, config).reads.followUpAt).toBe(1_000)
    expect(followUp(failed(30, true), 0, 1, config).reads.followUpAt).toBe(15_000)
  })

  it('retries only three times while nothing runs', () => {
    expect(followUp(failed(3, false), 0, 1, config).reads.followUpAt).not.toBeNull()
    expect(followUp(failed(4, false), 0, 1, config).reads.followUpAt).toBeNull()
  })

  it('polls while a turn runs and no push channel is connected, with a growing interval [R-READ-POLL]', () => {
    const offline = active({ recorded: runningTurn(), push: { connected: false, lost: true } })
    const first = followUp(offline, 0, 1, config)
    expect(first.reads).toMatchObject({ followUpAt: 1_000, polls: 1 })
    expect(followUp(first, 1_000, 1, config).reads).toMatchObject({ followUpAt: 3_000, polls: 2 })
    expect(followUp(active({ recorded: runningTurn() }), 0, 1, config).reads.followUpAt).toBeNull()
  })

  const endedTurn = {
    ...startTurn({ executionId: 'e1', sessionId: 't1', createdAt: '' }),
    ended: true,
  }
  /** The delays of the polls `followUp` asks for from `state` on, until it asks for none. */
  const pollsFrom = (state: EngineState) => {
    const delays: number[] = []
    for (let at = 0; ;) {
      state = followUp(state, at, 1, config)
      const next = state.reads.followUpAt
      if (next === null) return { delays, state }
      delays.push(next - at)
      at = next
      expect(delays.length).toBeLessThanOrEqual(LAGGING_RECORD_POLLS)
    }
  }

  it('polls a record that lags behind a turn this tab saw end for a while, then stops while nothing runs [R-READ-POLL]', () => {
    const { delays, state } = pollsFrom(active({ recorded: snapshotOf([]), settled: [endedTurn] }))
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000, 10_000])
    // The turn stays on screen; a notification polls afresh.
    expect(state.settled).toEqual([endedTurn])
    const notified = reduce(
      state,
      {
        type: 'push-message',
        message: { type: 'agentExecutionUpdated', data: { ...key, executionId: 'e1' } },
      },
      config,
    ).state
    expect(
      pollsFrom({ ...notified, reads: { ...notified.reads, wanted: false } }).delays,
    ).toHaveLength(LAGGING_RECORD_POLLS)
  })

  it('the polls of a turn that ran without push do not use up those of its lagging record [R-READ-POLL]', () => {
    // A turn ran for a minute without push: its record shows it running, polled all along.
    let state = active({ recorded: runningTurn(), push: { connected: false, lost: true } })
    for (let at = 0; at < 60_000; at = state.reads.followUpAt ?? at)
      state = followUp(state, at, 1, config)
    expect(state.reads.polls).toBeGreaterThan(LAGGING_RECORD_POLLS)
    // It ended here; the record says nothing runs but lags behind it.
    const { delays } = pollsFrom({ ...state, recorded: snapshotOf([]), settled: [endedTurn] })
    expect(delays).toHaveLength(LAGGING_RECORD_POLLS)
  })
})

describe('the alarm a delta leaves [R-ALARM-NEVER-LATE]', () => {
  /** This tab's own turn streams (request 1, execution e1), and a read is wanted behind it. */
  function streaming() {
    let state = initialEngineState({ key, tab: 'A' })
    for (const action of streamingWithReadWanted()) state = reduce(state, action, config).state
    return state
  }
  const delta = (at: number): EngineAction => ({
    type: 'turn-events',
    token: 1,
    events: [{ type: 'text-delta', id: 't1', delta: 'abcde' }],
    at,
    stampedAt: at,
  })

  it('a stream of deltas arms no alarm: the read held behind it moves later, the alarm stays early', () => {
    let state = streaming()
    // The read waits for the stream to be silent for streamSilenceMs: the alarm is armed for it.
    const armed = state.wakeAt
    expect(armed).toBe(config.streamSilenceMs)
    const N = 1_000
    const commands: string[] = []
    for (let i = 0; i < N; i++) {
      const step = reduce(state, delta(10 + i), config)
      state = step.state
      commands.push(...step.commands.map((command) => command.type))
    }
    expect(state.live?.assistant.content).toEqual([{ type: 'text', text: 'abcde'.repeat(N) }])
    // Each delta moved the held read later, and once asked for a set-alarm of its own; now a
    // delta's step asks for nothing but the batch relayed to the other tabs.
    expect(commands.filter((type) => type === 'set-alarm')).toHaveLength(0)
    expect(new Set(commands)).toEqual(new Set(['relay']))
    expect(state.wakeAt).toBe(armed)
    // The alarm is early, never late: the read is due after the last delta.
    expect(nextWake(state, config, everyPart)).toBe(10 + N - 1 + config.streamSilenceMs)
  })

  it('the early alarm finds nothing due and arms the real time; the read starts then', () => {
    let state = streaming()
    for (let i = 0; i < 100; i++) state = reduce(state, delta(10 + i), config).state
    const early = reduce(state, { type: 'tick', at: state.wakeAt! }, config)
    expect(early.commands).toEqual([{ type: 'set-alarm', at: 109 + config.streamSilenceMs }])
    expect(early.state.reads).toEqual(state.reads)
    const due = reduce(early.state, { type: 'tick', at: 109 + config.streamSilenceMs }, config)
    expect(due.commands.map((command) => command.type)).toContain('read')
  })
})
