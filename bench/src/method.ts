/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run, as in tests */
/**
 * The method every timed row follows (issue #15): inputs are built before the timer starts
 * (`prepare`), the contenders run in a rotated order each round, a full GC runs before every
 * timed run (so that one contender's garbage is not collected in the next one's time), every
 * contender gets the same warm-up round, and every run's result is checked (`check` throws on a
 * wrong final state). Reported: the minimum and the median of at least 5 rounds, and the spread.
 */

export interface Contender<Input, Result> {
  /** Builds what `run` needs (bytes, a client, a mounted tree): not timed. */
  prepare: () => Input | Promise<Input>
  /** The timed work. */
  run: (input: Input) => Promise<Result> | Result
  /** Throws when the result is not the expected final state. */
  check: (result: Result) => void
  /** Untimed clean-up after the run (unmount, dispose). */
  dispose?: (input: Input) => void | Promise<void>
}

/** A contender with its input type erased, so that contenders of different inputs share a record. */
export function contender<Input, Result>(c: Contender<Input, Result>): Contender<unknown, unknown> {
  return c as unknown as Contender<unknown, unknown>
}

export interface Timing {
  times: number[]
  min: number
  median: number
  max: number
}

/** A forced full GC (`node --expose-gc`, which `pnpm bench` passes); a no-op without it. */
export function gc(): void {
  ;(globalThis as { gc?: () => void }).gc?.()
}

export function hasGc(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function'
}

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export function timing(times: number[]): Timing {
  return { times, min: Math.min(...times), median: median(times), max: Math.max(...times) }
}

/**
 * Runs every contender `rounds` times (after one untimed warm-up round for all of them when
 * `warmup`), rotating which one goes first, with a GC before each timed run.
 */
export async function race<Names extends string>(
  contenders: Record<Names, Contender<unknown, unknown>>,
  options: { rounds: number; warmup: boolean },
): Promise<Record<Names, Timing>> {
  const names = Object.keys(contenders) as Names[]
  const times = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
    Names,
    number[]
  >
  for (let round = options.warmup ? -1 : 0; round < options.rounds; round++) {
    const shift = ((round % names.length) + names.length) % names.length
    const order = [...names.slice(shift), ...names.slice(0, shift)]
    for (const name of order) {
      const contender = contenders[name]
      const input: unknown = await contender.prepare()
      gc()
      const start = performance.now()
      const result: unknown = await contender.run(input)
      const elapsed = performance.now() - start
      await contender.dispose?.(input)
      try {
        contender.check(result)
      } catch (error) {
        throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`)
      }
      if (round >= 0) times[name].push(elapsed)
    }
  }
  return Object.fromEntries(names.map((name) => [name, timing(times[name])])) as Record<
    Names,
    Timing
  >
}

/** `min / median` of a timing, e.g. `101 / 104 ms`. */
export function showTiming(t: Timing, unit: (ms: number) => string): string {
  return `${unit(t.min)} / ${unit(t.median)}`
}

/** The spread of a timing: how far the slowest round is above the fastest, in percent. */
export function spread(t: Timing): number {
  return (t.max / t.min - 1) * 100
}

/** `a / b` by minimum and by median: `1.10× (1.12× by median)`. */
export function ratio(a: Timing, b: Timing): { min: number; median: number } {
  return { min: a.min / b.min, median: a.median / b.median }
}
