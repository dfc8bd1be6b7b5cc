/**
 * Property runs that say how to replay them: each prints its seed, and a failure names the seed
 * and the command. `PREVIEW_CHAT_SEED=<seed>` replays a run; a seed that found a bug is kept as a
 * fixed example beside the random runs (`examples`).
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { relative } from 'node:path'

export function seedFor(name: string): number {
  const fixed = process.env.PREVIEW_CHAT_SEED
  const seed = fixed === undefined ? (Math.random() * 2 ** 31) | 0 : Number(fixed)
  const { testPath, currentTestName } = expect.getState()
  const file = testPath ? relative(process.cwd(), testPath) : ''
  // `-t` takes a regular expression: the title is escaped so that brackets and parentheses match.
  const test = (currentTestName?.split(' > ').at(-1) ?? name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  console.log(
    `[property] ${name}: seed ${seed} (replay: PREVIEW_CHAT_SEED=${seed} npx vitest run ${file} -t '${test.replace(/'/g, "'\\''")}')`,
  )
  return seed
}

/** `fc.assert` with a printed seed (`examples` in `options` run first, always). */
export function assertSeeded<T>(
  name: string,
  property: fc.IProperty<T> | fc.IAsyncProperty<T>,
  options: fc.Parameters<T> = {},
) {
  const seed = seedFor(name)
  return fc.assert(property as fc.IProperty<T>, { endOnFailure: true, ...options, seed })
}
