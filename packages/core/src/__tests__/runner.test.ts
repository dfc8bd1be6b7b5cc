/**
 * The one runner (`engine/runner.ts`): actions through the reducer in order, commands performed,
 * and the alarm the reducer asks for — one timer for the earliest thing due.
 */
import { describe, expect, it } from 'vitest'
import type { Command, EngineAction, Step } from '../engine/model'
import { PreviewChatError } from '../wire/contract/errors'
import { initialEngineState } from '../engine/reduce'
import { createRunner } from '../engine/runner'
import { AT_ONCE } from '../engine/slices/reads'
import { engineConfig, key, streamingWithReadWanted } from './harness'

/** A host on simulated time: timers are kept in a list the test rings by hand. */
function simulatedHost() {
  let now = 0
  const timers: { at: number; ring: () => void; cancelled: boolean }[] = []
  const performed: Command[] = []
  const actions: EngineAction['type'][] = []
  return {
    performed,
    actions,
    timers,
    host: {
      now: () => now,
      setTimer(delay: number, ring: () => void) {
        const timer = { at: now + delay, ring, cancelled: false }
        timers.push(timer)
        return () => void (timer.cancelled = true)
      },
      perform: (command: Command) => void performed.push(command),
      onStep: (action: EngineAction) => void actions.push(action.type),
    },
    advance(to: number) {
      now = to
      for (const timer of timers.splice(0))
        if (!timer.cancelled && timer.at <= to) timer.ring()
        else if (!timer.cancelled) timers.push(timer)
    },
  }
}

describe('the runner [R-READ-COALESCE]', () => {
  it('a read due now is started in the same drain: activated, then tick, then the read command', () => {
    const sim = simulatedHost()
    const runner = createRunner(initialEngineState({ key, tab: 't' }), engineConfig, sim.host)
    runner.dispatch({ type: 'activated', at: 0, pushConnected: true })
    expect(sim.actions).toEqual(['activated', 'tick'])
    expect(sim.performed.map((c) => c.type)).toEqual(['read'])
    expect(runner.getState().reads).toMatchObject({ inFlight: true, count: 1, fetch: null })
    // The query function reports the read's start with its tag: the same read, not a second one.
    runner.dispatch({ type: 'read-started', at: 0, fetch: 7 })
    expect(runner.getState().reads).toMatchObject({ inFlight: true, count: 1, fetch: 7 })
  })

  it('keeps one timer for the earliest thing due, and a tick that finds nothing due asks again', () => {
    const sim = simulatedHost()
    const config = { ...engineConfig, minReadIntervalMs: 1_000 }
    const runner = createRunner(initialEngineState({ key, tab: 't' }), config, sim.host)
    runner.dispatch({ type: 'activated', at: 0, pushConnected: true })
    runner.dispatch({ type: 'read-started', at: 0, fetch: 1 })
    runner.dispatch({ type: 'read-failed', error: readError(), at: 0, random: 0.5 })
    // A retry is due later; a read wanted is due at the spacing (1,000 ms after the first).
    runner.dispatch({ type: 'read-wanted', urgent: false })
    const live = sim.timers.filter((t) => !t.cancelled)
    expect(live).toHaveLength(1)
    expect(live[0]!.at).toBe(runner.getState().wakeAt)
    sim.advance(1_000)
    expect(sim.performed.filter((c) => c.type === 'read')).toHaveLength(2)
  })

  it('an alarm cleared by the reducer (the session disposed) never rings a tick', () => {
    const sim = simulatedHost()
    const runner = createRunner(initialEngineState({ key, tab: 't' }), engineConfig, sim.host)
    runner.dispatch({ type: 'activated', at: 0, pushConnected: true })
    runner.dispatch({ type: 'read-started', at: 0, fetch: 1 })
    runner.dispatch({ type: 'read-failed', error: readError(), at: 0, random: 0.5 })
    expect(sim.timers.some((t) => !t.cancelled)).toBe(true)
    runner.dispatch({ type: 'disposed' })
    expect(sim.timers.every((t) => t.cancelled)).toBe(true)
    sim.advance(60_000)
    expect(sim.actions.filter((a) => a === 'tick')).toHaveLength(1)
  })
})

describe('the runner under a stream [R-ALARM-NEVER-LATE]', () => {
  it('a stream of deltas with a read wanted arms an alarm per streamSilenceMs, not per delta; the read starts once the stream is silent', () => {
    const sim = simulatedHost()
    const alarms: (number | null)[] = []
    const runner = createRunner(initialEngineState({ key, tab: 't' }), engineConfig, {
      ...sim.host,
      onStep(action: EngineAction, step: Step) {
        sim.host.onStep(action)
        for (const command of step.commands)
          if (command.type === 'set-alarm') alarms.push(command.at)
      },
    })
    for (const action of streamingWithReadWanted()) runner.dispatch(action)
    const delta = (at: number) => {
      sim.advance(at)
      runner.dispatch({
        type: 'turn-events',
        token: 1,
        events: [{ type: 'text-delta', id: 't1', delta: 'abcde' }],
        at,
        stampedAt: at,
      })
    }
    const silence = engineConfig.streamSilenceMs
    // The first read at once, the POST's deadline (gone once the turn began), the read held back.
    expect(alarms.splice(0)).toEqual([AT_ONCE, engineConfig.submitTimeoutMs, null, silence])
    // A delta every 10 ms for 12 s: the alarm rings early, each time arming the real time.
    for (let at = 10; at <= 12_000; at += 10) delta(at)
    // (The alarm of 5,000 rings before the delta of 5,000: the last delta then was at 4,990.)
    expect(alarms).toEqual([4_990 + silence, 9_980 + silence])
    expect(sim.timers.filter((t) => !t.cancelled)).toHaveLength(1)
    expect(sim.performed.filter((c) => c.type === 'read')).toHaveLength(1)
    // The stream goes silent: the read starts streamSilenceMs after its last delta, not later.
    sim.advance(12_000 + silence - 1)
    expect(sim.performed.filter((c) => c.type === 'read')).toHaveLength(1)
    sim.advance(12_000 + silence)
    expect(sim.performed.filter((c) => c.type === 'read')).toHaveLength(2)
    // The first read's, the three early ones, the read's.
    expect(sim.actions.filter((a) => a === 'tick')).toHaveLength(5)
    expect(alarms).toEqual([4_990 + silence, 9_980 + silence, 12_000 + silence])
  })
})

const readError = () => new PreviewChatError('server_error', 'failed')
