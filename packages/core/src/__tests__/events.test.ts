/**
 * A step reports what happened as data (`Step.events`) beside its state and commands: a part (the
 * queue) reads those, never the commands, and never undoes a decision of the engine.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { EngineAction, EngineState, StepEvent } from '../engine/model'
import { initialEngineState, reduce, snapshotAction } from '../engine/reduce'
import {
  engineConfig,
  finishedTurn,
  key,
  messageIdOf,
  readEmptyThread,
  snapshot,
  streamingWithReadWanted,
} from './harness'

/** The state after `actions`, and what the last one reported. */
function run(actions: EngineAction[], state = initialEngineState({ key, tab: 'A' })) {
  let events: readonly StepEvent[] = []
  for (const action of actions) {
    const step = reduce(state, action, engineConfig)
    state = step.state
    events = step.events ?? []
  }
  return { state, events }
}
const types = (events: readonly StepEvent[]) => events.map((e) => e.type)

describe('what a step reports [R-ENGINE-EVENTS]', () => {
  it('a read answered; a message posted, then taken with its submit settled; Stop pressed; a turn ended and how', () => {
    const opened = run(readEmptyThread())
    expect(types(opened.events)).toEqual(['read-answered'])
    const submit: EngineAction = {
      type: 'submit-requested',
      request: 1,
      messageId: messageIdOf(1),
      text: 'Q',
      at: 0,
    }
    expect(run([submit], opened.state).events).toEqual([
      { type: 'posting', active: true },
      {
        type: 'message',
        fate: 'posted',
        token: 1,
        text: 'Q',
        messageId: messageIdOf(1),
      },
    ])
    const streaming = run(streamingWithReadWanted())
    const started = run(streamingWithReadWanted().slice(0, -1))
    expect(types(started.events)).toEqual(['submit-settled', 'own-turn-began', 'message'])
    expect(started.events[0]).toMatchObject({
      request: 1,
      result: { outcome: 'accepted', executionId: 'e1' },
    })
    const stopped = run([{ type: 'stop-requested', request: 2, at: 1 }], streaming.state)
    expect(types(stopped.events)).toEqual(['stop-pressed'])
    // A second press joins the Stop under way: nothing new happened.
    expect(run([{ type: 'stop-requested', request: 3, at: 1 }], stopped.state).events).toEqual([])
    const read: EngineAction[] = [
      { type: 'read-started', at: 2, fetch: 2 },
      snapshotAction(snapshot(finishedTurn('e1', 'Q', 'A')), 'read', {
        at: 2,
        stampedAt: 2,
        random: 0,
      }),
    ]
    const ended = run(read, streaming.state as EngineState)
    expect(ended.events).toContainEqual(
      expect.objectContaining({
        type: 'turn-ended',
        ending: expect.objectContaining({ executionId: 'e1', status: 'success' }) as unknown,
      }),
    )
    expect(types(ended.events)).toContain('read-answered')
  })

  it('a busy refusal is a settled submit', () => {
    const streaming = run(streamingWithReadWanted())
    const busy = run(
      [{ type: 'submit-requested', request: 5, messageId: 'x', text: 'again', at: 1 }],
      streaming.state,
    )
    expect(busy.events).toEqual([
      { type: 'submit-settled', request: 5, result: { outcome: 'busy' } },
    ])
  })

  it('no file of a part (the queue’s, the relay’s, the released platform’s) reads the commands of a step, nor undoes what the engine set', () => {
    const engine = join(__dirname, '../engine')
    const files = [
      ...readdirSync(join(engine, 'queue')).map((file) => join('queue', file)),
      'slices/relay.ts',
      'slices/released.ts',
    ]
    for (const file of files) {
      const source = readFileSync(join(engine, file), 'utf8')
      expect(source, file).not.toMatch(/commands\.(find|some|filter|flatMap)\(/)
      expect(source, file).not.toMatch(/c\.type === '(settle-submit|turn-ended)'/)
      expect(source, file).not.toMatch(/before\.(error|stop)\b/)
    }
  })
})
