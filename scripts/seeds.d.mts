/** A seed of a suite, as scripts/seeds.json lists it. */
export interface SeedEntry {
  seed: number
  /** What a run on this seed found, when it found something. */
  found?: string
  /** Fails today: the suite expects its failure (an error that contains `error`). */
  knownFailing?: { until: string; error: string }
}

/** How seeds are chosen in this process: the committed list, fresh ones, or one replayed. */
export function seedMode(): 'list' | 'fresh' | 'replay'

/** The committed list's shape (scripts/seeds.json). */
export interface SeedList {
  every: number[]
  suites: Record<string, SeedEntry[]>
}

/** The seeds suite `name` runs on, in order; `from`: the list (seeds.json by default). */
export function seedsFor(name: string, from?: SeedList): SeedEntry[]

/** Runs `run(seed)` for each seed of suite `name`, printing each with the command that replays it. */
export function eachSeed<R extends void | Promise<void>>(
  name: string,
  run: (seed: number) => R,
  replay: (seed: number) => string,
  from?: SeedList,
): R
