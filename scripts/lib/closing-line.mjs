/**
 * The closing line of .ci/run, `N passed, N failed`, from what the run left in test-results/: the
 * test runners' JSON reports and `steps.json`, which `pnpm test` (scripts/test.mjs) writes as it
 * ends. A test counts once, as its runner reported it. A step that failed with no failing test in
 * a report of its own (lint, a build, a consumer check, or a runner that died before its report)
 * counts as one failure, and is named: a red run never ends "0 failed". So does a test command
 * that exited non-zero before it wrote `steps.json` (the install, say).
 */

/** The name of the file `pnpm test` writes its steps' ends into, in test-results/. */
export const stepsFile = 'steps.json'

/**
 * The JSON report each step of `pnpm test` with a test runner writes into test-results/
 * (vitest.config.ts, e2e/playwright.config.ts, stories/vitest.config.ts), by the step's name.
 */
export const reportOf = Object.freeze({
  unit: 'vitest.json',
  e2e: 'playwright.json',
  stories: 'stories.json',
})

/**
 * What one JSON report counts. Vitest writes Jest-style totals; Playwright writes `stats` with
 * `expected`/`unexpected`/`flaky` (a flaky test passed on its retry). Anything else counts nothing.
 * @param {unknown} report
 * @returns {{ passed: number, failed: number }}
 */
export function countReport(report) {
  const number = (value) => (typeof value === 'number' && Number.isFinite(value) ? value : 0)
  if (typeof report !== 'object' || report === null) return { passed: 0, failed: 0 }
  const r = /** @type {Record<string, any>} */ (report)
  if (typeof r.stats === 'object' && r.stats !== null)
    return {
      passed: number(r.stats.expected) + number(r.stats.flaky),
      failed: number(r.stats.unexpected),
    }
  return {
    passed: number(r.numPassedTests),
    failed: number(r.numFailedTests) + number(r.numRuntimeErrorTestSuites),
  }
}

/**
 * @typedef {{ name: string, state: 'passed' | 'failed' | 'not run', code?: number, report?: string }} StepEnd
 */

/**
 * The totals and the lines that explain the failures no report counted.
 * @param {{
 *   reports: ReadonlyMap<string, unknown>,
 *   steps?: readonly StepEnd[],
 *   status: number,
 * }} run the reports by file name; the steps as `steps.json` has them (undefined: not written);
 *   the test command's exit status
 * @returns {{ passed: number, failed: number, notes: string[] }}
 */
export function closingCounts({ reports, steps, status }) {
  let passed = 0
  let failed = 0
  const failedIn = new Map()
  for (const [file, report] of reports) {
    const counts = countReport(report)
    passed += counts.passed
    failed += counts.failed
    failedIn.set(file, counts.failed)
  }
  const notes = []
  for (const step of steps ?? []) {
    if (step.state !== 'failed') continue
    if (step.report !== undefined && (failedIn.get(step.report) ?? 0) > 0) continue
    failed += 1
    notes.push(
      `step "${step.name}" failed (exit ${step.code ?? '?'}) with no failing test in ${step.report === undefined ? 'a report' : `its report, ${step.report}`}: counted as one failure`,
    )
  }
  if (status !== 0 && failed === 0) {
    failed = 1
    notes.push(
      `the test command exited ${status}${steps === undefined ? ` before any step ended (no ${stepsFile})` : ''} with no failure counted: counted as one`,
    )
  }
  return { passed, failed, notes }
}
