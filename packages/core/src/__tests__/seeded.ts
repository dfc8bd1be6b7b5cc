/**
 * Property runs that say how to replay them: each prints its seed, and a failure names the seed
 * and the command. `PREVIEW_CHAT_SEED=<seed>` replays a run; a seed that found a bug is kept as a
 * fixed example beside the random runs (`examples`).
 */
import fc from 'fast-check'

export function seedFor(name: string): number {
  const fixed = process.env.PREVIEW_CHAT_SEED
  const seed = fixed === undefined ? (Math.random() * 2 ** 31) | 0 : Number(fixed)
  console.log(
    `[property] ${name}: seed ${seed} (replay: PREVIEW_CHAT_SEED=${seed} npx vitest run -t "${name}")`,
  )
  return seed
}

/** `fc.assert` with a printed seed; `examples` run first, always. */
export function assertSeeded<T>(
  name: string,
  property: fc.IPropertyWithHooks<T> | fc.IAsyncPropertyWithHooks<T>,
  options: { numRuns: number; examples?: T[] },
) {
  const seed = seedFor(name)
  return fc.assert(property as fc.IProperty<T>, {
    seed,
    numRuns: options.numRuns,
    ...(options.examples && { examples: options.examples }),
    endOnFailure: true,
  })
}
