// Sums the JSON reports that the test runners leave in test-results/ into the one closing line
// `N passed, N failed` that .ci/run ends with. Vitest writes Jest-style totals; Playwright writes
// `stats` with `expected`/`unexpected`/`flaky`.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const dir = new URL('../test-results/', import.meta.url).pathname
let passed = 0
let failed = 0
let files = []
try {
  files = readdirSync(dir).filter((name) => name.endsWith('.json'))
} catch {
  // No reports at all: nothing ran.
}
for (const name of files) {
  const report = JSON.parse(readFileSync(join(dir, name), 'utf8'))
  if (report.stats) {
    passed += report.stats.expected + (report.stats.flaky ?? 0)
    failed += report.stats.unexpected
  } else {
    passed += report.numPassedTests ?? 0
    failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0)
  }
}
console.log(`${passed} passed, ${failed} failed`)
