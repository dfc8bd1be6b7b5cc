/**
 * Row P1 (issue 36) from a made-up report of `src/reload/main.ts --json`: how many reloads each
 * plan measures, that a report missing a reload fails the smoke's count, and how the goals are
 * judged (every run, the throttled cells only). No browser and no clock: the figures are given.
 */
import { describe, expect, it } from 'vitest'
import type { ThrottleCell, ThrottleReport } from '../reload/main'
import { reloadsOf, throttlePlan, throttleRowOf, type ThrottlePlan } from '../rows/throttle'

type Figures = Partial<Record<string, { ratio: number; afterRead?: number }>>

/** A report of `plan` where every page is at the floor, but for `figures` (by `rate|contender|messages`). */
function reportOf(plan: ThrottlePlan, figures: Figures = {}, checked = reloadsOf(plan)) {
  const runs = Array.from({ length: plan.runs }, () => ({
    loadStart: [1, 1, 1],
    loadEnd: [2, 2, 2],
    cells: plan.rates.flatMap((rate) =>
      plan.kinds.flatMap((kind) =>
        plan.contenders.map((contender): ThrottleCell => {
          const messages = [200, 2000][kind]!
          const f = figures[`${rate}|${contender}|${messages}`]
          const floorMedian = 100
          return {
            rate,
            thread: `${messages} messages`,
            messages,
            contender: contender as ThrottleCell['contender'],
            reloads: plan.rounds,
            min: floorMedian * (f?.ratio ?? 1),
            median: floorMedian * (f?.ratio ?? 1),
            max: floorMedian * (f?.ratio ?? 1),
            floorMedian,
            ratio: f?.ratio ?? 1,
            afterRead: f?.afterRead ?? 20,
            floorAfterRead: 20,
            painted: floorMedian,
            floorPainted: floorMedian,
          }
        }),
      ),
    ),
  }))
  const report: ThrottleReport = {
    chromium: 'test',
    commit: 'test',
    dirty: false,
    rounds: plan.rounds,
    rates: plan.rates,
    checked,
    runs,
  }
  return report
}

describe('row P1', () => {
  const full = throttlePlan({ smoke: false })
  const smoke = throttlePlan({ smoke: true })

  it('measures 3 runs of a warm-up and 5 rounds, 3 pages, 2 threads, 2 rates; the smoke 3 reloads', () => {
    expect(reloadsOf(full)).toBe(3 * 6 * 3 * 2 * 2)
    expect(full.rates).toEqual([4, 1])
    expect(reloadsOf(smoke)).toBe(3)
    expect(smoke.rates).toEqual([4])
  })

  it('passes the smoke count only when every reload was checked', () => {
    expect(throttleRowOf(smoke, reportOf(smoke)).counts).toEqual([
      { label: 'P1: every reload measured and checked (3 of 3)', ok: true },
    ])
    expect(throttleRowOf(smoke, reportOf(smoke, {}, 2)).counts?.[0]?.ok).toBe(false)
    expect(throttleRowOf(smoke, reportOf(smoke)).met).toBeNull()
  })

  it('fails on a missing page rather than reporting without it', () => {
    const report = reportOf(full)
    report.runs[1]!.cells = report.runs[1]!.cells.filter((c) => c.contender !== 'ours')
    expect(() => throttleRowOf(full, report)).toThrow(/no ours/)
  })

  it('judges the goals at 4× in every run, not unthrottled', () => {
    expect(throttleRowOf(full, reportOf(full)).met).toBe(true)
    // Unthrottled figures are shown beside, never judged.
    expect(throttleRowOf(full, reportOf(full, { '1|ours|2000': { ratio: 3 } })).met).toBe(true)
    expect(
      throttleRowOf(full, reportOf(full, { '4|readmePrefetch|200': { ratio: 1.11 } })).met,
    ).toBe(false)
    expect(throttleRowOf(full, reportOf(full, { '4|ours|2000': { ratio: 1.26 } })).met).toBe(false)
    expect(throttleRowOf(full, reportOf(full, { '4|ours|2000': { ratio: 1.25 } })).met).toBe(true)
    // The time after the read: README usage + prefetch at 2,000 messages, ≤ 1.2× the floor's.
    const after = (afterRead: number) =>
      throttleRowOf(full, reportOf(full, { '4|readmePrefetch|2000': { ratio: 1, afterRead } })).met
    expect(after(24)).toBe(true)
    expect(after(25)).toBe(false)
  })

  it('prints a line per run, thread, page and rate', () => {
    const row = throttleRowOf(full, reportOf(full))
    expect(row.details.split('\n').filter((line) => line.startsWith('| 1 |'))).toHaveLength(
      2 * 3 * 2,
    )
  })
})
