/**
 * The `isNew` hint, decided by the reducer: the host reads from this browser's storage whether a
 * session of the thread was followed here before (`EngineInit.knownHere`), and the engine decides
 * whether the hint is stale (`staleHint`). Either way the first render takes the hint, as a server
 * render (which cannot know) does and hydration expects; only a stale hint's first activation
 * reads. Rows in the style of `reduce.table.test.ts`: given a state, when an action, then these
 * state fields, these commands and this status.
 */
import { describe, expect, it } from 'vitest'
import { sessionStatus, type SessionStatus } from '../engine/derive'
import type { EngineAction, EngineState } from '../engine/model'
import { initialEngineState, reduce, serverRenderState, type EngineInit } from '../engine/reduce'
import { selectSessionState } from '../engine/select'
import { engineConfig, key } from './harness'

const fresh = (init: Partial<EngineInit> = {}) => initialEngineState({ key, tab: 'A', ...init })
const activated: EngineAction = { type: 'activated', at: 0, pushConnected: true }
const mounted: Extract<EngineAction, { type: 'mounted' }> = {
  type: 'mounted',
  cached: { kind: 'none' },
  at: 0,
  stampedAt: 0,
  random: 0,
}

interface Row {
  title: string
  given: EngineState
  when: EngineAction
  then: Record<string, unknown>
  /** Every command but the runner's alarm, in order (each matched by the fields it names). */
  commands?: unknown[]
  status: SessionStatus
}

const table = (rows: Row[]) =>
  it.each(rows)('$title', ({ given, when, then, commands = [], status }) => {
    const step = reduce(given, when, engineConfig)
    expect(step.state).toMatchObject(then)
    expect(step.commands.filter((command) => command.type !== 'set-alarm')).toMatchObject(commands)
    expect(sessionStatus(step.state)).toBe(status)
  })

describe('initialEngineState: whether an isNew hint is stale', () => {
  it.each([
    { isNew: true, knownHere: false, stale: false },
    { isNew: true, knownHere: true, stale: true },
    { isNew: false, knownHere: true, stale: false },
    { isNew: undefined, knownHere: undefined, stale: false },
  ])('isNew $isNew, known here $knownHere: stale $stale', ({ isNew, knownHere, stale }) => {
    const state = fresh({
      ...(isNew !== undefined && { isNew }),
      ...(knownHere !== undefined && { knownHere }),
    })
    expect(state.staleHint === true).toBe(stale)
    // The hint is taken for the first render, stale or not.
    expect(state.synced).toBe(isNew === true)
  })

  it('a stale hint shows as the fresh one does: in the first render and in a server render', () => {
    const init = { key, tab: 'A', isNew: true }
    const stale = { ...init, knownHere: true }
    expect(selectSessionState(initialEngineState(stale))).toEqual(
      selectSessionState(initialEngineState(init)),
    )
    expect(selectSessionState(serverRenderState(stale, mounted, engineConfig, reduce))).toEqual(
      selectSessionState(serverRenderState(init, mounted, engineConfig, reduce)),
    )
  })
})

const after = (state: EngineState, action: EngineAction) =>
  reduce(state, action, engineConfig).state

describe('activated, with an isNew hint', () => {
  table([
    {
      title: 'a fresh hint (this browser never followed the thread): no read, an empty thread',
      given: fresh({ isNew: true, knownHere: false }),
      when: activated,
      then: { active: true, synced: true, reads: { wanted: false, count: 0 } },
      status: 'idle',
    },
    {
      title: 'a stale hint (followed here before, `?new=1` left in the URL): a read is wanted',
      given: fresh({ isNew: true, knownHere: true }),
      when: activated,
      then: { active: true, synced: true, reads: { wanted: true, count: 0 } },
      status: 'idle',
    },
    {
      title: 'known here without a hint: a read is wanted, as for any thread',
      given: fresh({ knownHere: true }),
      when: activated,
      then: { active: true, synced: false, reads: { wanted: true, count: 0 } },
      status: 'recovering',
    },
  ])
})

describe('the alarm after activation, with an isNew hint', () => {
  table([
    {
      title: 'a fresh hint: nothing to read',
      given: after(fresh({ isNew: true, knownHere: false }), activated),
      when: { type: 'tick', at: 0 },
      then: { reads: { inFlight: false, count: 0 } },
      status: 'idle',
    },
    {
      title: 'a stale hint: the thread is read, the empty thread shown until it answers',
      given: after(fresh({ isNew: true, knownHere: true }), activated),
      when: { type: 'tick', at: 0 },
      then: { reads: { inFlight: true, wanted: false, count: 1 } },
      commands: [{ type: 'read' }],
      status: 'idle',
    },
  ])
})
