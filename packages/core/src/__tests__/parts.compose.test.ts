/**
 * One way to extend the engine (issue 46): a part (`EnginePart`) wraps the reducer it is given,
 * keeps its state under its own key, reads what happened from the step's `events` and may add its
 * own due time. A part written here, in a test, extends the engine with no change to it; parts
 * compose by wrapping, in the order they are listed, so two parts that take one action both see
 * it, in that order.
 */
import { describe, expect, it } from 'vitest'
import type { TurnEvent } from '../wire/contract/events'
import type { EngineAction, EnginePart, EngineState, Step } from '../engine/model'
import { everyPart, initialEngineState, reducerWith } from '../engine/reduce'
import { nextDeadline } from '../engine/schedule'
import { createRunner } from '../engine/runner'
import { engineConfig as config, key, ownTurnActions } from './harness'

/** The engine state with the counting part's own key. */
type Counted = EngineState & { readonly deltas?: number }

const deltasOf = (state: EngineState) => (state as Counted).deltas ?? 0

/**
 * A third part, written here: it counts the text deltas of this tab's own turn into its own key,
 * from the step's `own-turn-streamed` events, and asks to be woken once `10` deltas are counted
 * (its own due time), when it starts over.
 */
const counting: EnginePart = {
  wrap: (inner) => (state, action, config) => {
    const due = action.type === 'tick' && deltasOf(state) >= 10
    const done = inner(due ? ({ ...state, deltas: 0 } as Counted) : state, action, config)
    let deltas = 0
    for (const event of done.events ?? [])
      if (event.type === 'own-turn-streamed')
        deltas += event.events.filter((e) => e.type === 'text-delta').length
    if (deltas === 0) return done
    return { ...done, state: { ...done.state, deltas: deltasOf(done.state) + deltas } as Counted }
  },
  dueAt: (state) => (deltasOf(state) >= 10 ? 0 : null),
}

const delta = (text: string): TurnEvent => ({ type: 'text-delta', id: 't', delta: text })

/** A tab mounted, listened to, then its own turn on an empty thread (`ownTurnActions`). */
const turn: EngineAction[] = [
  { type: 'mounted', cached: { kind: 'none' }, at: 0, stampedAt: 0, random: 0 },
  { type: 'activated', at: 0, pushConnected: true },
  ...ownTurnActions,
]

function runAll(reducer: ReturnType<typeof reducerWith>, actions: readonly EngineAction[]) {
  let state = initialEngineState({ key, tab: 'me' })
  const steps: Step[] = []
  for (const action of actions) {
    const done = reducer(state, action, config)
    steps.push(done)
    state = done.state
  }
  return { state, steps }
}

describe('a part written outside the engine extends it with no change to it [R-ENGINE-PARTS-COMPOSE]', () => {
  it('a part that counts the deltas of this tab’s turn keeps them under its own key, and changes nothing else', () => {
    const engine = runAll(reducerWith(everyPart), turn)
    const counted = runAll(reducerWith([...everyPart, counting]), turn)
    expect(deltasOf(counted.state)).toBe(3)
    // Every other field, every command and every event are the engine's, as without the part.
    const { deltas: _, ...rest } = counted.state as Counted
    expect(rest).toEqual(engine.state)
    expect(counted.steps.map((s) => [s.commands, s.events])).toEqual(
      engine.steps.map((s) => [s.commands, s.events]),
    )
  })

  it('its own due time is the scheduler’s, and the tick at that time reaches its wrapper', () => {
    const many = Array.from({ length: 10 }, (_, i) => delta(String(i)))
    const reducer = reducerWith([...everyPart, counting])
    const { state, steps } = runAll(reducer, [
      ...turn.slice(0, 6),
      { type: 'turn-events', token: 1, events: many, at: 12, stampedAt: 12 },
    ])
    expect(deltasOf(state)).toBe(11)
    expect(nextDeadline(state, config, [...everyPart, counting])).toBe(0)
    // The post-step armed the alarm for it, and the tick it brings starts the count over.
    expect(steps.at(-1)?.commands).toContainEqual({ type: 'set-alarm', at: 0 })
    expect(deltasOf(reducer(state, { type: 'tick', at: 13 }, config).state)).toBe(0)
  })

  it('it runs in a session’s runner like the engine’s own parts', () => {
    const performed: string[] = []
    const runner = createRunner(
      initialEngineState({ key, tab: 'me' }),
      config,
      { now: () => 0, setTimer: () => () => {}, perform: (c) => performed.push(c.type) },
      [...everyPart, counting],
    )
    for (const action of turn) runner.dispatch(action)
    expect(deltasOf(runner.getState())).toBe(3)
    expect(performed).toContain('post')
  })
})

/** A part that logs when it sees `type` on the way in and its step on the way out. */
const logging = (name: string, type: EngineAction['type'], log: string[]): EnginePart => ({
  wrap: (inner) => (state, action, config) => {
    if (action.type !== type) return inner(state, action, config)
    log.push(`${name} sees ${type}`)
    const done = inner(state, action, config)
    log.push(`${name} sees the step (${(done.events ?? []).map((e) => e.type).join(', ')})`)
    return done
  },
})

describe('parts compose by wrapping, in the order they are listed [R-ENGINE-PARTS-COMPOSE]', () => {
  it('two parts that take one action both see it: the later one first, the earlier one’s step first', () => {
    const log: string[] = []
    const first = logging('first', 'submit-requested', log)
    const second = logging('second', 'submit-requested', log)
    runAll(reducerWith([...everyPart, first, second]), turn.slice(0, 5))
    expect(log).toEqual([
      'second sees submit-requested',
      'first sees submit-requested',
      'first sees the step (posting, message)',
      'second sees the step (posting, message)',
    ])
    log.length = 0
    runAll(reducerWith([...everyPart, second, first]), turn.slice(0, 5))
    expect(log[0]).toBe('first sees submit-requested')
  })

  it('a part listed after the relay sees the relay’s action, and the relay still tells the other tabs of a turn a part wraps', () => {
    const log: string[] = []
    const reducer = reducerWith([...everyPart, logging('watcher', 'turn-events', log), counting])
    const { steps } = runAll(reducer, turn)
    // Every batch of the turn was seen by the watcher and counted, and relayed all the same.
    expect(log.filter((line) => line.startsWith('watcher sees turn-events'))).toHaveLength(3)
    const relayed = steps.flatMap((s) => s.commands).filter((c) => c.type === 'relay')
    expect(relayed.map((c) => c.type === 'relay' && c.message.kind)).toEqual([
      'posting',
      'turn',
      'events',
      'events',
      'events',
    ])
  })
})
