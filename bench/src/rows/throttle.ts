/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run */
/**
 * Row P1 (issue 36): the page load under a 4× CPU throttle (Chromium's
 * `Emulation.setCPUThrottlingRate`, Lighthouse's mobile setting), beside the same reloads without
 * one. It runs the reload row (`src/reload/main.ts`, `bench:reload`) in a process of its own:
 * the README usage with `client.prefetch` and the demo, each against the floor (the same markup
 * as the README page), at 200 and 2,000 messages; 3 runs, each a warm-up and 5 rounds, every
 * contender at both rates rotated; per run the median over the floor, the spread (slowest over
 * fastest reload), the load average at its start and end, and the time after the read (the
 * history read's `responseEnd` to the last message in the DOM), ours against the floor's.
 *
 * `--smoke`: 1 run of 1 round without a warm-up, 200 messages, the throttle on, the demo's build
 * reused if there is one (`pnpm test:e2e` builds it); asserted: it ran and every reload was
 * checked. A time never fails it.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ThrottleCell, ThrottleReport } from '../reload/main'
import { fmt, type Row, type Sizes } from '../row'

/** A row with a table of its own, printed under the main one (`src/main.ts`). */
export interface DetailedRow extends Row {
  details: string
}

const bench = fileURLToPath(new URL('../../', import.meta.url))
const RATE = 4
const GOALS = { prefetch: 1.1, afterRead: 1.2, demo: 1.25 }
const pageName: Record<string, string> = {
  readmePrefetch: 'README usage + client.prefetch',
  ours: 'the demo',
  floor: 'the floor',
}

function runReload(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', '--conditions=@preview-chat/source', 'src/reload/main.ts', ...args],
      {
        cwd: bench,
        env: { ...process.env, TSX_TSCONFIG_PATH: 'tsconfig.run.json' },
        maxBuffer: 256 * 1024 * 1024,
      },
      (error, _stdout, stderr) => {
        if (error)
          reject(new Error(`bench:reload ${args.join(' ')} failed: ${stderr.slice(-4000)}`))
        else resolve()
      },
    )
    // Its progress and its full tables (issues 21 and 30, per run and rate) go to stderr: the
    // table on stdout is the one README.md records.
    child.stdout?.pipe(process.stderr)
    child.stderr?.pipe(process.stderr)
  })
}

/** What row P1 runs: the full row, or its smoke. */
export interface ThrottlePlan {
  smoke: boolean
  runs: number
  rounds: number
  warmUp: boolean
  rates: number[]
  /** `allKinds` of `src/reload/main.ts`: 0 is 200 messages, 1 is 2,000. */
  kinds: number[]
  contenders: string[]
}

export function throttlePlan(sizes: Sizes): ThrottlePlan {
  return {
    smoke: sizes.smoke,
    runs: sizes.smoke ? 1 : 3,
    rounds: sizes.smoke ? 1 : 5,
    warmUp: !sizes.smoke,
    rates: sizes.smoke ? [RATE] : [RATE, 1],
    kinds: sizes.smoke ? [0] : [0, 1],
    contenders: ['readmePrefetch', 'ours', 'floor'],
  }
}

/** How many reloads the plan measures (and checks), warm-ups included. */
export const reloadsOf = (plan: ThrottlePlan) =>
  plan.runs *
  (plan.rounds + (plan.warmUp ? 1 : 0)) *
  plan.kinds.length *
  plan.contenders.length *
  plan.rates.length

export async function throttleRow(sizes: Sizes): Promise<DetailedRow> {
  const plan = throttlePlan(sizes)
  const dir = await mkdtemp(join(tmpdir(), 'bench-throttle-'))
  const json = join(dir, 'report.json')
  try {
    await runReload([
      `--throttle=${plan.rates.join(',')}`,
      `--runs=${plan.runs}`,
      `--rounds=${plan.rounds}`,
      `--kinds=${plan.kinds.join(',')}`,
      `--contenders=${plan.contenders.join(',')}`,
      `--json=${json}`,
      // Issue 46: the pages built as an app builds them (Vite, production), timed on a first
      // visit (nothing cached), with the main thread's CPU time beside the wall clock.
      '--builder=vite',
      '--visit=cold',
      '--cpu',
      ...(plan.warmUp ? [] : ['--no-warm-up']),
      // The smoke reuses the demo's build (CI's e2e step made it); a full run builds what it measures.
      ...(plan.smoke ? ['--build-if-missing'] : []),
    ])
    return throttleRowOf(plan, JSON.parse(await readFile(json, 'utf8')) as ThrottleReport)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The row of a report of `src/reload/main.ts --json`; throws where a cell is missing. */
export function throttleRowOf(plan: ThrottlePlan, report: ThrottleReport): DetailedRow {
  const { runs, rounds, rates, kinds, contenders } = plan
  const expected = reloadsOf(plan)
  const cell = (run: number, rate: number, messages: number, contender: string) => {
    const found = report.runs[run]?.cells.find(
      (c) => c.rate === rate && c.messages === messages && c.contender === contender,
    )
    if (!found) throw new Error(`row P1: no ${contender} at ${messages} messages, ${rate}×`)
    return found
  }
  const sizesOf = kinds.map((k) => [200, 2000][k]!)
  const loads = (i: number) =>
    `load ${report.runs[i]!.loadStart[0]!.toFixed(1)} → ${report.runs[i]!.loadEnd[0]!.toFixed(1)}`
  const perRun = (f: (i: number) => string) =>
    report.runs.map((_, i) => `run ${i + 1} (${loads(i)}): ${f(i)}`).join('; ')
  const ratios = (rate: number, contender: string) => (i: number) =>
    sizesOf
      .map((n) => {
        const c = cell(i, rate, n, contender)
        return `${fmt.int(n)}: ${fmt.x(c.ratio)} (${fmt.ms(c.median)}, spread ${fmt.x(c.max / c.min)})`
      })
      .join(', ')
  const afterRead = (i: number) =>
    sizesOf
      .map((n) => {
        const c = cell(i, RATE, n, 'readmePrefetch')
        const d = cell(i, RATE, n, 'ours')
        return `${fmt.int(n)}: README + prefetch ${fmt.ms(c.afterRead)}, demo ${fmt.ms(d.afterRead)}, floor ${fmt.ms(c.floorAfterRead)}`
      })
      .join('; ')

  const all = (f: (c: ThrottleCell) => boolean) =>
    report.runs.every((run) => run.cells.filter((c) => c.rate === RATE).every(f))
  const met = plan.smoke
    ? null
    : all((c) => c.contender !== 'readmePrefetch' || c.ratio <= GOALS.prefetch) &&
      all((c) => c.contender !== 'ours' || c.ratio <= GOALS.demo) &&
      all(
        (c) =>
          c.contender !== 'readmePrefetch' ||
          c.messages !== 2000 ||
          c.afterRead <= GOALS.afterRead * c.floorAfterRead,
      )

  const lines = [
    `Row P1 — the page load under a ${RATE}× CPU throttle (Chromium ${report.chromium}, commit ${report.commit}${report.dirty ? ' + uncommitted changes' : ''}; ${runs} run(s) of ${plan.warmUp ? 'a warm-up and ' : ''}${rounds} round(s), every page at ${rates.map((r) => `${r}×`).join(' and ')} rotated; times from the first visit's navigation start (pages built by vite build, nothing cached), medians):`,
    '',
    '| run | load average (1/5/15 min) at its start → end | thread | page | CPU | last message in the DOM (min / median) | over the floor (median) | spread (slowest / fastest) | after the read: page | floor | page / floor | painted: page | over the floor’s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const [i, run] of report.runs.entries())
    for (const n of sizesOf)
      for (const contender of contenders)
        for (const rate of rates) {
          const c = cell(i, rate, n, contender)
          lines.push(
            `| ${i + 1} | ${run.loadStart.join(' ')} → ${run.loadEnd.join(' ')} | ${fmt.int(n)} messages | ${pageName[contender]} | ${rate}× | ${fmt.ms(c.min)} / ${fmt.ms(c.median)} | ${fmt.x(c.ratio)} | ${fmt.x(c.max / c.min)} | ${fmt.ms(c.afterRead)} | ${fmt.ms(c.floorAfterRead)} | ${fmt.x(c.afterRead / c.floorAfterRead)} | ${fmt.ms(c.painted)} | ${fmt.x(c.painted / c.floorPainted)} |`,
          )
        }

  return {
    id: 'P1',
    name: `Page load, ${RATE}× CPU throttle`,
    workload: `a reload of a recorded thread of ${sizesOf.map(fmt.int).join(' and ')} messages in headless Chromium: the README usage with client.prefetch, and the demo, each against the floor (fetch + JSON.parse + the same <li>s)`,
    method: `src/reload/main.ts (bench:reload) with --throttle=${rates.join(',')}: Emulation.setCPUThrottlingRate ${RATE} (Lighthouse's mobile setting) on the page before its first visit${rates.includes(1) ? ', beside the same reloads unthrottled' : ''}; ${runs} run(s), each ${plan.warmUp ? 'a warm-up and ' : ''}${rounds} round(s) in a fresh browser context per reload, the pages and rates rotated; every reload checked (${report.checked} of ${expected}); last message in the DOM from the first visit's navigation start (a fresh browser context, nothing cached; pages built by vite build); the time after the read = the history read's responseEnd (Resource Timing) to the last message in the DOM`,
    ours: `README usage + prefetch / floor at ${RATE}×: ${perRun(ratios(RATE, 'readmePrefetch'))}; the demo / floor at ${RATE}×: ${perRun(ratios(RATE, 'ours'))}`,
    peer: `after the read at ${RATE}× (median): ${perRun(afterRead)}`,
    ratio: rates.includes(1)
      ? `unthrottled, for comparison: README usage + prefetch / floor ${perRun(ratios(1, 'readmePrefetch'))}; the demo / floor ${perRun(ratios(1, 'ours'))}`
      : `(smoke: ${RATE}× only)`,
    goal: `at ${RATE}×, in each of 3 runs, by median: README usage + prefetch ≤ ${GOALS.prefetch.toFixed(2)}× the floor at 200 and 2,000 messages; its time after the read at 2,000 ≤ ${GOALS.afterRead}× the floor's; the demo ≤ ${GOALS.demo}× (issue 36)`,
    met,
    counts: [
      {
        label: `P1: every reload measured and checked (${report.checked} of ${expected})`,
        ok: report.checked === expected && report.runs.length === runs,
      },
    ],
    details: lines.join('\n'),
  }
}
