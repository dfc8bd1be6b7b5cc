/**
 * Which steps of `pnpm test` (scripts/test.mjs) start now: the one decision of its scheduler, kept
 * apart from the processes so that it is tested on its own (scripts/__tests__/schedule.test.ts).
 *
 * The steps are a list in priority order; each names the steps it `needs`: those that write what
 * it reads (a build before what packs it), or that must not run beside it (two steps writing one
 * file). At most `jobs` steps run at once; a free slot goes to the first step in the list whose
 * needs have all passed. After a failure no step starts, as make does without `-k`: those running
 * end as they would (their results are the run's too); with `keepGoing` every step runs, one whose
 * need failed too (`--keep-going`: its failure is said by the need's).
 */

/**
 * @typedef {{ name: string, needs?: readonly string[] }} Step
 * @typedef {'waiting' | 'running' | 'passed' | 'failed'} StepState
 */

/**
 * Throws an error that names the step when a need is no step of the list or is not above it: the
 * order of the list is an order the needs allow, so that no run can wait forever.
 * @param {readonly Step[]} steps
 */
export function checkNeeds(steps) {
  const names = steps.map(({ name }) => name)
  const duplicate = names.find((name, at) => names.indexOf(name) !== at)
  if (duplicate !== undefined) throw new Error(`two steps are named "${duplicate}"`)
  steps.forEach(({ name, needs = [] }, at) => {
    for (const need of needs) {
      const where = names.indexOf(need)
      if (where === -1)
        throw new Error(`step "${name}" needs "${need}", which is no step: ${names.join(', ')}`)
      if (where >= at)
        throw new Error(
          `step "${name}" needs "${need}", which comes after it: move "${need}" above "${name}"`,
        )
    }
  })
}

/**
 * The steps to start now, in priority order: as many as free slots allow, each waiting, each of
 * its needs passed (a need that is not among `states`, because it was not chosen for this run, is
 * taken as done: `--from e2e` runs on the builds already there).
 * @param {readonly Step[]} steps the chosen steps, in priority order
 * @param {ReadonlyMap<string, StepState>} states each chosen step's state
 * @param {{ jobs: number, keepGoing?: boolean }} options
 * @returns {string[]}
 */
export function stepsToStart(steps, states, { jobs, keepGoing = false }) {
  const all = [...states.values()]
  if (!keepGoing && all.includes('failed')) return []
  let free = jobs - all.filter((state) => state === 'running').length
  const settled = (need) => {
    const state = states.get(need)
    return state === undefined || state === 'passed' || (keepGoing && state === 'failed')
  }
  const start = []
  for (const { name, needs = [] } of steps) {
    if (free <= 0) break
    if (states.get(name) !== 'waiting' || !needs.every(settled)) continue
    start.push(name)
    free--
  }
  return start
}
