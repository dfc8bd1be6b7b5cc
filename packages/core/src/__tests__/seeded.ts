/**
 * Property runs that say how to replay them: each prints its seed, and a failure names the seed
 * and the command. The seeds are chosen in scripts/seeds.mjs: `pnpm test` runs the committed list
 * (scripts/seeds.json), `PREVIEW_CHAT_SEED=<seed>` replays one, `pnpm test:fuzz` draws fresh ones.
 * A run that found a bug is kept as a fixed example beside the list (`examples`, or a FOUND run).
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { relative } from 'node:path'
import { eachSeed } from '../../../../scripts/seeds.mjs'

/** The command that replays `seed` of the test running now. */
function replayCommand(name: string, seed: number): string {
  const { testPath, currentTestName } = expect.getState()
  const file = testPath ? relative(process.cwd(), testPath) : ''
  // `-t` takes a regular expression: the title is escaped so that brackets and parentheses match.
  const test = (currentTestName?.split(' > ').at(-1) ?? name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return `PREVIEW_CHAT_SEED=${seed} npx vitest run ${file} -t '${test.replace(/'/g, "'\\''")}'`
}

/** `fc.assert` on each seed of suite `name` (`examples` in `options` run first, always). */
export function assertSeeded<T>(
  name: string,
  property: fc.IProperty<T> | fc.IAsyncProperty<T>,
  options: fc.Parameters<T> = {},
) {
  return eachSeed(
    name,
    (seed) => fc.assert(property as fc.IProperty<T>, { endOnFailure: true, ...options, seed }),
    (seed) => replayCommand(name, seed),
  )
}
