/**
 * Ids from the wire are ids like any other, whatever they spell: every name `Object.prototype`
 * has (`constructor`, `toString`, `__proto__`, `hasOwnProperty` …) fed as a tool call id, a
 * stream id, an execution id and a queue id finds nothing an object inherits.
 */
import { describe, expect, it } from 'vitest'
import { applyTurnEvents, startTurn } from '../engine/fold'
import { initialEngineState } from '../engine/reduce'
import { learnHanded } from '../engine/queue/server'
import { watchAs } from '../engine/slices/endings'
import type { QueueState } from '../engine/queue/model'
import type { TurnEvent } from '../wire/contract/events'
import { byId, withId } from '../wire/contract/ids'
import { key } from './harness'

const names = Object.getOwnPropertyNames(Object.prototype)
const options = { delegationCharLimit: 100, now: () => 1 }
const begin = () =>
  startTurn({ executionId: 'e1', sessionId: 't1', message: 'Q', createdAt: '2026-12-06T00:00:00Z' })

describe('every Object.prototype name as an id from the wire [R-WIRE-IDS-OWN]', () => {
  it('covers the names that broke a delegation', () => {
    expect(names).toEqual(
      expect.arrayContaining(['constructor', 'toString', '__proto__', 'hasOwnProperty']),
    )
  })

  for (const id of names)
    it(`"${id}" as a delegation's tool call id, a text stream's id and a tool call's id keeps every part`, () => {
      const events: TurnEvent[] = [
        { type: 'tool-call', toolCallId: id, toolName: 'delegate', input: null },
        {
          type: 'subagent-chunk',
          parentToolCallId: id,
          taskPath: 'research',
          chunk: { type: 'text-delta', delta: 'child ' },
        },
        {
          type: 'subagent-chunk',
          parentToolCallId: id,
          taskPath: 'research',
          chunk: { type: 'text-delta', delta: 'text' },
        },
        { type: 'text-start', id },
        { type: 'text-delta', id, delta: 'answer' },
      ]
      const turn = applyTurnEvents(begin(), events, options)
      const [call, text] = turn.assistant.content
      expect(call).toMatchObject({ type: 'tool-call', toolCallId: id })
      expect(call?.type === 'tool-call' && call.childTrace?.text).toBe('child text')
      expect(text).toEqual({ type: 'text', text: 'answer' })
      expect(byId(turn.delegations, id)).toEqual({ used: 10, openSegment: null })
      expect(Object.getPrototypeOf(turn.delegations)).toBe(Object.prototype)
    })

  it('as an execution id: a turn watched under it keeps its own origin', () => {
    for (const id of names) {
      const state = watchAs(initialEngineState({ key, tab: 'A' }), id, 'own')
      expect(byId(state.origins, id)).toBe('own')
      expect(Object.keys(state.origins ?? {})).toEqual([id])
    }
  })

  it("as a queue id of the server's queue: each handed item is learnt, with when", () => {
    const items = names.map((id, i) => ({
      id: `m${i}`,
      text: id,
      status: 'queued' as const,
      queueId: id,
    }))
    const queue = {
      view: { items },
      handedAt: {},
      serverReads: { asked: 3, applied: 0, inFlight: false, wanted: false },
    } as unknown as QueueState
    const { queue: learnt, learnt: any } = learnHanded(queue)
    expect(any).toBe(true)
    for (const id of names) expect(byId(learnt.handedAt, id)).toBe(3)
    expect(Object.keys(learnt.handedAt)).toHaveLength(names.length)
  })

  it('withId keeps `__proto__` an own property, and byId finds only own properties', () => {
    const record = withId(withId({}, '__proto__', 1), 'constructor', 2)
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype)
    expect(byId(record, '__proto__')).toBe(1)
    expect(byId(record, 'constructor')).toBe(2)
    expect(byId(record, 'toString')).toBeUndefined()
    expect(byId(JSON.parse(JSON.stringify(record)) as typeof record, '__proto__')).toBe(1)
  })
})
