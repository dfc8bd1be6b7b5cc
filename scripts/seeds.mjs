// The seeds of the property and model suites, chosen in one place. `pnpm test` runs each suite on
// the committed list (scripts/seeds.json), so two runs of one commit run the same cases;
// `PREVIEW_CHAT_SEED=<seed>` replays one seed; `PREVIEW_CHAT_SEED=fresh` (what `pnpm test:fuzz`
// sets) draws a new seed for each suite (`PREVIEW_CHAT_FRESH_SEEDS=<n>`: n of them, one after
// another), to find new failing seeds. Each seed is printed before its
// run, with the command that replays it.
import { readFileSync } from 'node:fs'

const list = JSON.parse(readFileSync(new URL('./seeds.json', import.meta.url), 'utf8'))

/** How seeds are chosen in this process: `list`, `fresh` or `replay`. */
export function seedMode() {
  const env = process.env.PREVIEW_CHAT_SEED
  if (env === undefined || env === '') return 'list'
  return env === 'fresh' ? 'fresh' : 'replay'
}

/**
 * The seeds suite `name` runs on, in order (an entry with `knownFailing` last). `from`: the list
 * (scripts/seeds.json; a test passes its own).
 */
export function seedsFor(name, from = list) {
  const mode = seedMode()
  if (mode === 'fresh')
    return Array.from({ length: Number(process.env.PREVIEW_CHAT_FRESH_SEEDS) || 1 }, () => ({
      seed: (Math.random() * 2 ** 31) | 0,
    }))
  if (mode === 'replay') {
    const seed = Number(process.env.PREVIEW_CHAT_SEED)
    if (!Number.isSafeInteger(seed))
      throw new Error(
        `PREVIEW_CHAT_SEED=${process.env.PREVIEW_CHAT_SEED} is no seed: give an integer (or \`fresh\`)`,
      )
    return [{ seed }]
  }
  const extra = from.suites[name] ?? []
  return [
    ...from.every.map((seed) => ({ seed })),
    ...extra.filter((entry) => !entry.knownFailing),
    ...extra.filter((entry) => entry.knownFailing),
  ]
}

/**
 * Runs `run(seed)` for each seed of suite `name` (`seedsFor`), one after another, printing each
 * with `replay(seed)`, the command that replays it. A `knownFailing` seed must fail with its
 * `error`: it passing fails the suite too, with what to change in seeds.json. Returns a promise
 * when `run` does (an async property), else runs synchronously.
 */
export function eachSeed(name, run, replay, from = list) {
  const seeds = seedsFor(name, from)
  const mode = seedMode()
  const print = ({ seed, knownFailing }) =>
    console.log(
      `[property] ${name}: seed ${seed}${mode === 'list' ? '' : ` (${mode})`}${
        knownFailing ? `, KNOWN FAILING until ${knownFailing.until}` : ''
      } (replay: ${replay(seed)})`,
    )
  const expectFailure = ({ seed, knownFailing }, error) => {
    if (error === undefined)
      throw new Error(
        `seed ${seed} of "${name}" passes now, but scripts/seeds.json lists it as known failing until ${knownFailing.until}: the fix has landed, so remove its \`knownFailing\` there (keep the seed).`,
      )
    const text = [error, error?.cause].map((e) => (e instanceof Error ? e.message : String(e)))
    if (!text.some((message) => message.includes(knownFailing.error))) throw error
    console.log(
      `[property] ${name}: seed ${seed} failed as known (until ${knownFailing.until}): ${knownFailing.error}`,
    )
  }
  const runOne = (entry) => {
    print(entry)
    if (!entry.knownFailing) return run(entry.seed)
    let result
    try {
      result = run(entry.seed)
    } catch (error) {
      return expectFailure(entry, error)
    }
    if (!(result instanceof Promise)) return expectFailure(entry, undefined)
    return result.then(
      () => expectFailure(entry, undefined),
      (error) => expectFailure(entry, error),
    )
  }
  let index = 0
  const next = () => {
    while (index < seeds.length) {
      const result = runOne(seeds[index++])
      if (result instanceof Promise) return result.then(next)
    }
    return undefined
  }
  return next()
}
