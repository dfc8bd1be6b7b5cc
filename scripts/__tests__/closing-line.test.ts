// scripts/lib/closing-line.mjs: the `N passed, N failed` that .ci/run ends with, from the runners'
// reports and how pnpm test's steps ended.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { closingCounts, countReport, reportOf, type StepEnd } from '../lib/closing-line.mjs'

const vitest = (passed: number, failed = 0) => ({ numPassedTests: passed, numFailedTests: failed })
const playwright = (expected: number, unexpected = 0, flaky = 0) => ({
  stats: { expected, unexpected, flaky },
})

const reports = (entries: Record<string, unknown>) => new Map(Object.entries(entries))

const steps = (entries: Record<string, Omit<StepEnd, 'name'>>): StepEnd[] =>
  Object.entries(entries).map(([name, end]) => ({ name, ...end }))

const green = steps({
  lint: { state: 'passed', code: 0 },
  unit: { state: 'passed', code: 0, report: 'vitest.json' },
  e2e: { state: 'passed', code: 0, report: 'playwright.json' },
})

describe('the closing line of .ci/run', () => {
  it('sums the reports of a green run', () => {
    expect(
      closingCounts({
        reports: reports({ 'vitest.json': vitest(1673), 'playwright.json': playwright(78, 0, 1) }),
        steps: green,
        status: 0,
      }),
    ).toEqual({ passed: 1752, failed: 0, notes: [] })
  })

  it('counts a step that failed with no report of its own (lint) as one failure, and names it', () => {
    const run = closingCounts({
      reports: reports({ 'vitest.json': vitest(1673) }),
      steps: steps({
        lint: { state: 'failed', code: 1 },
        unit: { state: 'passed', code: 0, report: 'vitest.json' },
        e2e: { state: 'not run', report: 'playwright.json' },
      }),
      status: 1,
    })
    expect(run.passed).toBe(1673)
    expect(run.failed).toBe(1)
    expect(run.notes).toEqual([
      'step "lint" failed (exit 1) with no failing test in a report: counted as one failure',
    ])
  })

  it('counts a failing test once: the step its report names adds nothing', () => {
    expect(
      closingCounts({
        reports: reports({ 'vitest.json': vitest(1673), 'playwright.json': playwright(78, 1) }),
        steps: steps({
          unit: { state: 'passed', code: 0, report: 'vitest.json' },
          e2e: { state: 'failed', code: 1, report: 'playwright.json' },
        }),
        status: 1,
      }),
    ).toEqual({ passed: 1751, failed: 1, notes: [] })
  })

  it('counts a runner that failed with no failing test in its report (or no report) once', () => {
    const run = closingCounts({
      reports: reports({ 'vitest.json': vitest(1673) }),
      steps: steps({
        unit: { state: 'failed', code: 1, report: 'vitest.json' },
        e2e: { state: 'failed', code: 1, report: 'playwright.json' },
      }),
      status: 1,
    })
    expect(run.failed).toBe(2)
    expect(run.notes).toEqual([
      'step "unit" failed (exit 1) with no failing test in its report, vitest.json: counted as one failure',
      'step "e2e" failed (exit 1) with no failing test in its report, playwright.json: counted as one failure',
    ])
  })

  it('never ends "0 failed" after a non-zero exit: an install that failed before any step counts one', () => {
    expect(closingCounts({ reports: reports({}), steps: undefined, status: 1 })).toEqual({
      passed: 0,
      failed: 1,
      notes: [
        'the test command exited 1 before any step ended (no steps.json) with no failure counted: counted as one',
      ],
    })
    // Green steps, a red exit: still one.
    expect(closingCounts({ reports: reports({}), steps: green, status: 2 }).failed).toBe(1)
  })

  it('counts nothing of a report of another shape', () => {
    for (const report of [null, 'text', 42, [], { stats: null }, { numPassedTests: '9' }])
      expect(countReport(report)).toEqual({ passed: 0, failed: 0 })
  })
})

it("names the reports the runners write: reportOf and the runners' configs agree", () => {
  const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
  expect(reportOf).toEqual({ unit: 'vitest.json', e2e: 'playwright.json', stories: 'stories.json' })
  expect(read('vitest.config.ts')).toContain(`json: 'test-results/${reportOf.unit}'`)
  expect(read('e2e/playwright.config.ts')).toContain(`outputFile: \`\${results}${reportOf.e2e}\``)
  expect(read('stories/vitest.config.ts')).toContain(
    `json: repo('test-results/${reportOf.stories}')`,
  )
  // Each is a step of pnpm test.
  const steps = read('scripts/test.mjs')
  for (const step of Object.keys(reportOf)) expect(steps).toContain(`['${step}', `)
})
