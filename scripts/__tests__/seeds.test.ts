// scripts/seeds.mjs, the one place the property and model suites take their seeds from, on the
// committed list (scripts/seeds.json). A known failing entry is tried on a list of the test's own
// (the committed one has none while every found seed passes).
import { afterEach, describe, expect, it, vi } from 'vitest'
import list from '../seeds.json'
import { eachSeed, seedsFor, type SeedEntry, type SeedList } from '../seeds.mjs'

const known = 'queue model dedupe'
/** The committed list, with one known failing seed of `known` added, as a fault not yet fixed. */
const withKnown: SeedList = {
  every: list.every,
  suites: {
    ...list.suites,
    [known]: [
      ...(list.suites[known] ?? []),
      { seed: 7, knownFailing: { until: 'its fix lands', error: '(q5) tab 2' } },
    ],
  },
}
const knownSeeds = withKnown.suites[known]!.filter(
  (entry): entry is SeedEntry & Required<Pick<SeedEntry, 'knownFailing'>> => !!entry.knownFailing,
)
const knownSeed = knownSeeds[0]!
/** Fails on each known failing seed with its error, as its property does. */
const failingAsKnown = (seed: number) => {
  const entry = knownSeeds.find((known) => known.seed === seed)
  if (entry) throw new Error(`Property failed\nCaused by: ${entry.knownFailing!.error}`)
}
const replay = (seed: number) => `PREVIEW_CHAT_SEED=${seed}`

afterEach(() => {
  vi.unstubAllEnvs()
  vi.restoreAllMocks()
})

describe('the seeds of the property suites [R-TESTS-SEEDS-CHOSEN]', () => {
  it('are the committed list, the same on every run: every suite on `every`, then its own, known failing last', () => {
    vi.stubEnv('PREVIEW_CHAT_SEED', '')
    const seeds = (name: string) => seedsFor(name).map(({ seed }) => seed)
    expect(seeds('any suite')).toEqual(list.every)
    expect(seeds('mutated turn events')).toEqual([
      ...list.every,
      ...list.suites['mutated turn events']!.map(({ seed }) => seed),
    ])
    const withKnownSeeds = seedsFor(known, withKnown).map(({ seed }) => seed)
    expect(withKnownSeeds.slice(-knownSeeds.length)).toEqual(knownSeeds.map(({ seed }) => seed))
    expect(seeds(known)).toEqual(seeds(known))
  })

  it('replay one seed with PREVIEW_CHAT_SEED, and draw a fresh one per suite with `fresh`', () => {
    vi.stubEnv('PREVIEW_CHAT_SEED', '42')
    expect(seedsFor(known)).toEqual([{ seed: 42 }])
    vi.stubEnv('PREVIEW_CHAT_SEED', 'fresh')
    const drawn = new Set(Array.from({ length: 20 }, () => seedsFor(known)[0]!.seed))
    expect(drawn.size).toBeGreaterThan(1)
    expect(seedsFor(known)).toHaveLength(1)
    vi.stubEnv('PREVIEW_CHAT_FRESH_SEEDS', '3')
    expect(seedsFor(known)).toHaveLength(3)
    vi.stubEnv('PREVIEW_CHAT_SEED', 'seven')
    expect(() => seedsFor(known)).toThrow(/PREVIEW_CHAT_SEED=seven is no seed/)
  })

  it('are each printed before their run, with the command that replays them', () => {
    vi.stubEnv('PREVIEW_CHAT_SEED', '')
    const printed: string[] = []
    vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line))
    const ran: number[] = []
    eachSeed(
      'any suite',
      (seed) => void ran.push(seed),
      (seed) => replay(seed),
    )
    expect(ran).toEqual(list.every)
    expect(printed).toEqual(
      list.every.map((seed) => `[property] any suite: seed ${seed} (replay: ${replay(seed)})`),
    )
  })

  it('run a known failing seed: its failure passes, its passing fails and says what to change', async () => {
    vi.stubEnv('PREVIEW_CHAT_SEED', '')
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    expect(() => eachSeed(known, failingAsKnown, replay, withKnown)).not.toThrow()
    expect(() => eachSeed(known, () => undefined, replay, withKnown)).toThrow(
      /passes now, but scripts\/seeds.json lists it as known failing .* remove its `knownFailing`/,
    )
    const anotherFault = (seed: number) => {
      if (seed === knownSeed.seed) throw new Error('another fault')
    }
    expect(() => eachSeed(known, anotherFault, replay, withKnown)).toThrow('another fault')
    // An async property: the same, through its promise.
    const ran: number[] = []
    await expect(
      eachSeed(
        known,
        async (seed) => {
          ran.push(seed)
          failingAsKnown(seed)
        },
        replay,
        withKnown,
      ),
    ).resolves.toBeUndefined()
    expect(ran).toEqual(seedsFor(known, withKnown).map(({ seed }) => seed))
    await expect(eachSeed(known, async () => undefined, replay, withKnown)).rejects.toThrow(
      /passes now/,
    )
  })

  it('stop at the first failing seed that is not known to fail', () => {
    vi.stubEnv('PREVIEW_CHAT_SEED', '')
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    const ran: number[] = []
    expect(() =>
      eachSeed(
        'mutated turn events',
        (seed) => {
          ran.push(seed)
          throw new Error(`seed ${seed} fails`)
        },
        replay,
      ),
    ).toThrow(`seed ${list.every[0]} fails`)
    expect(ran).toEqual([list.every[0]])
  })
})
