// Sums what the test runners and `pnpm test` leave in test-results/ into the one closing line
// `N passed, N failed` that .ci/run ends with (scripts/lib/closing-line.mjs says how). Its
// argument: the test command's exit status. A failure no test report counted is said on a line of
// its own before the closing line.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { closingCounts, stepsFile } from './lib/closing-line.mjs'

const dir = new URL('../test-results/', import.meta.url).pathname
const status = Number(process.argv[2] ?? 0)
let files = []
try {
  files = readdirSync(dir).filter((name) => name.endsWith('.json'))
} catch {
  // No reports at all: nothing ran.
}
const reports = new Map()
let steps
for (const name of files) {
  let parsed
  try {
    parsed = JSON.parse(readFileSync(join(dir, name), 'utf8'))
  } catch (error) {
    console.log(`test-results/${name} is no JSON (${String(error)}): not counted`)
    continue
  }
  if (name === stepsFile) steps = Array.isArray(parsed?.steps) ? parsed.steps : undefined
  else reports.set(name, parsed)
}
const { passed, failed, notes } = closingCounts({
  reports,
  steps,
  status: Number.isInteger(status) ? status : 1,
})
for (const note of notes) console.log(note)
console.log(`${passed} passed, ${failed} failed`)
