/**
 * No test's outcome depends on the machine's speed (issue 27, row h): every property suite of the
 * repository (a test file that imports fast-check) runs a step budget and sets a timeout sized for
 * a loaded 2-core machine, never vitest's 5 s default, which a run under load (two builds at once)
 * went past while the same commit passed on a quiet machine.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../../../..')

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) return []
    if (statSync(path).isDirectory()) return testFiles(path)
    return /\.test\.tsx?$/.test(name) ? [path] : []
  })
}

const propertySuites = ['packages', 'bench/src']
  .flatMap((dir) => testFiles(join(root, dir)))
  .filter((file) => /^import .+ from 'fast-check'$/m.test(readFileSync(file, 'utf8')))

describe('property suites are sized for a loaded machine [R-TESTS-SPEED-FREE]', () => {
  it('there are property suites to check', () => {
    expect(propertySuites.length).toBeGreaterThanOrEqual(10)
  })

  it.each(propertySuites.map((file) => relative(root, file)))(
    '%s sets a timeout of at least 60 s',
    (file) => {
      const code = readFileSync(join(root, file), 'utf8')
      const timeouts = [...code.matchAll(/testTimeout: ([\d_]+)/g)].map((m) =>
        Number(m[1]!.replace(/_/g, '')),
      )
      expect(timeouts.length, `${file} sets no testTimeout`).toBeGreaterThan(0)
      for (const timeout of timeouts) expect(timeout).toBeGreaterThanOrEqual(60_000)
    },
  )
})
