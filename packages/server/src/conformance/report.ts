/** The suite's answer for people (a table) and for machines (JSON). */
import type { ConformanceReport, Outcome } from './run'

const outcomes: Outcome[] = ['pass', 'fail', 'known-limit', 'not-applicable']

/** How many checks ended each way. */
export function countOutcomes(report: ConformanceReport): Record<Outcome, number> {
  const counts = { pass: 0, fail: 0, 'known-limit': 0, 'not-applicable': 0 }
  for (const result of report.results) counts[result.outcome]++
  return counts
}

/** One row per check: rule id, check, result, and what it saw or why. */
export function formatTable(report: ConformanceReport): string {
  const rows = report.results.map((r) => [r.rule, r.check, r.outcome, r.detail])
  const head = ['rule', 'check', 'result', 'detail']
  const widths = [0, 1, 2].map((i) =>
    Math.max(...[head, ...rows].map((row) => (row[i] ?? '').length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd()
  const counts = countOutcomes(report)
  return [
    `preview-chat conformance: ${report.baseUrl} (flavor ${report.flavor}, script ${report.script})`,
    '',
    line(head),
    line(widths.map((w) => '-'.repeat(w)).concat('------')),
    ...rows.map(line),
    '',
    outcomes.map((outcome) => `${counts[outcome]} ${outcome}`).join(', '),
  ].join('\n')
}

/** The report as JSON, with the counts. */
export function formatJson(report: ConformanceReport): string {
  return JSON.stringify({ ...report, counts: countOutcomes(report) }, null, 2)
}
