// scripts/lib/schedule.mjs: which steps of `pnpm test` start, given what ran.
import { describe, expect, it } from 'vitest'
import { checkNeeds, stepsToStart, type StepState } from '../lib/schedule.mjs'

const steps = [
  { name: 'lint' },
  { name: 'build' },
  { name: 'app builds', needs: ['lint', 'build'] },
  { name: 'e2e', needs: ['app builds'] },
  { name: 'unit' },
  { name: 'consumer', needs: ['build'] },
]

const statesOf = (entries: Record<string, StepState>) =>
  new Map(steps.map(({ name }) => [name, entries[name] ?? 'waiting']))

/** A whole run: each round starts what `stepsToStart` says, then ends the oldest running step. */
function order(jobs: number, fails: string[] = [], keepGoing = false) {
  const states = statesOf({})
  const rounds: string[][] = []
  const running: string[] = []
  for (;;) {
    const start = stepsToStart(steps, states, { jobs, keepGoing })
    for (const name of start) states.set(name, 'running')
    running.push(...start)
    rounds.push(start)
    const ended = running.shift()
    if (ended === undefined) break
    states.set(ended, fails.includes(ended) ? 'failed' : 'passed')
  }
  return { rounds, states: Object.fromEntries(states) }
}

describe('stepsToStart', () => {
  it('one at a time, runs the steps in the order of the list', () => {
    expect(order(1).rounds.flat()).toEqual(steps.map(({ name }) => name))
  })

  it('two at a time, fills a free slot with the first step whose needs have passed', () => {
    expect(order(2).rounds).toEqual([
      ['lint', 'build'],
      // lint has ended, build runs: app builds waits for build; unit needs nothing.
      ['unit'],
      // build has ended: app builds, above consumer in the list, takes the slot.
      ['app builds'],
      ['consumer'],
      ['e2e'],
      [],
      [],
    ])
  })

  it('starts nothing after a failure, while what runs ends; --keep-going runs every step', () => {
    const halted = order(2, ['build'])
    expect(halted.states).toEqual({
      lint: 'passed',
      build: 'failed',
      unit: 'passed',
      'app builds': 'waiting',
      e2e: 'waiting',
      consumer: 'waiting',
    })
    const kept = order(2, ['build'], true)
    expect(Object.values(kept.states).every((state) => state !== 'waiting')).toBe(true)
    expect(kept.states.build).toBe('failed')
  })

  it('takes a need left out of the run (--only, --from) as done', () => {
    const chosen = steps.filter(({ name }) => name === 'e2e' || name === 'consumer')
    const states = new Map<string, StepState>(chosen.map(({ name }) => [name, 'waiting']))
    expect(stepsToStart(chosen, states, { jobs: 2 })).toEqual(['e2e', 'consumer'])
  })

  it('never starts more than the free slots, nor a step twice', () => {
    const states = statesOf({ lint: 'running', build: 'passed' })
    expect(stepsToStart(steps, states, { jobs: 2 })).toEqual(['unit'])
    states.set('unit', 'running')
    expect(stepsToStart(steps, states, { jobs: 2 })).toEqual([])
    expect(stepsToStart(steps, states, { jobs: 3 })).toEqual(['consumer'])
  })
})

describe('checkNeeds', () => {
  it('takes a list whose every need is a step above the one that needs it', () => {
    expect(() => checkNeeds(steps)).not.toThrow()
  })

  it('names the step and the need when a need is no step, or comes after', () => {
    expect(() => checkNeeds([{ name: 'e2e', needs: ['app build'] }])).toThrow(
      'step "e2e" needs "app build", which is no step: e2e',
    )
    expect(() => checkNeeds([{ name: 'e2e', needs: ['build'] }, { name: 'build' }])).toThrow(
      'step "e2e" needs "build", which comes after it: move "build" above "e2e"',
    )
    expect(() => checkNeeds([{ name: 'e2e', needs: ['e2e'] }])).toThrow('comes after it')
    expect(() => checkNeeds([{ name: 'unit' }, { name: 'unit' }])).toThrow(
      'two steps are named "unit"',
    )
  })
})
