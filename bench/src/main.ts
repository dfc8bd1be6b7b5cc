/**
 * `pnpm bench` runs the six rows against the peers (issue #8, made fair by issue #15), the scaling
 * rows S1–S3, the before/after rows of issue #15's wins W1–W4 and the page load under a 4× CPU
 * throttle in headless Chromium (P1, issue 36), and prints one table (Markdown, so that README.md
 * can record it as is; P1's per-run table below it). `--smoke` runs tiny sizes and asserts only that every
 * row runs and that the count goals hold; it never judges a time. `--only=1,S1,W2` runs some rows.
 */
import { cpus, loadavg } from 'node:os'
import { bundleRow } from './rows/bundle'
import { burstRow } from './rows/burst'
import { commitsRow } from './rows/commits'
import { memoryRow } from './rows/memory'
import { pipelineRow } from './rows/pipeline'
import { replaceRow } from './rows/replace'
import { longThreadRow, pipelineScalingRow, replaceScalingRow } from './rows/scaling'
import { rereadsRow } from './rows/rereads'
import { throttleRow } from './rows/throttle'
import { bundleWinRow, hotPathRow, readsRow } from './rows/wins'
import { hasGc } from './method'
import type { Row, Sizes } from './row'

/**
 * Count goals known to fail today, each with the finding in bench/README.md. `--smoke` reports
 * them without failing, and fails if one starts passing (so that it gets enforced from then on).
 */
const knownFailures = new Set<number | string>([])

const sizes: Sizes = { smoke: process.argv.includes('--smoke') }
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice(7)
  .split(',')

const all: [number | string, (sizes: Sizes) => Promise<Row>][] = [
  [1, pipelineRow],
  [2, commitsRow],
  [3, replaceRow],
  [4, burstRow],
  [5, memoryRow],
  [6, bundleRow],
  ['S1', pipelineScalingRow],
  ['S2', replaceScalingRow],
  ['S3', longThreadRow],
  ['W1', readsRow],
  ['W2', hotPathRow],
  ['W3', bundleWinRow],
  ['W4', rereadsRow],
  ['P1', throttleRow],
]

if (!hasGc()) {
  console.error(
    'pnpm bench needs node --expose-gc (the bench script passes it): the method GCs between runs.',
  )
  process.exit(1)
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')

function table(rows: Row[]): string {
  const lines = [
    '| # | row | workload | method | ours | peer | ratio | goal | met |',
    '| - | --- | -------- | ------ | ---- | ---- | ----- | ---- | --- |',
  ]
  for (const row of rows) {
    const met = row.met === null ? 'n/a (smoke)' : row.met ? 'yes' : '**no**'
    lines.push(
      `| ${[row.id, row.name, row.workload, row.method, row.ours, row.peer, row.ratio, row.goal, met].map((v) => cell(String(v))).join(' | ')} |`,
    )
  }
  return lines.join('\n')
}

const rows: Row[] = []
const problems: string[] = []
const started = performance.now()
// Other processes on the machine add noise: the load is recorded with the table.
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
const loadAtStart = load()
for (const [id, run] of all) {
  if (only && !only.includes(String(id))) continue
  const rowStarted = performance.now()
  try {
    rows.push(await run(sizes))
  } catch (error) {
    problems.push(
      `row ${id} did not run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    )
  }
  process.stderr.write(`row ${id}: ${((performance.now() - rowStarted) / 1000).toFixed(1)} s\n`)
}

console.log(
  `\npreview-chat benchmarks${sizes.smoke ? ' (--smoke: tiny sizes, counts only)' : ''} — Node ${process.version}, ${cpus().length} cores, ${new Date().toISOString()}, ${((performance.now() - started) / 1000).toFixed(0)} s; load average (1/5/15 min) ${loadAtStart} at the start, ${load()} at the end\n`,
)
console.log(table(rows))
// A row with a table of its own (P1: per run, per page, per rate) prints it under the main one.
for (const row of rows)
  if ('details' in row && typeof row.details === 'string') console.log(`\n${row.details}`)

for (const row of rows)
  for (const count of row.counts ?? []) {
    if (count.ok && knownFailures.has(row.id))
      problems.push(
        `${count.label}: holds now; remove row ${row.id} from knownFailures in bench/src/main.ts`,
      )
    else if (!count.ok && knownFailures.has(row.id))
      console.log(`\nKNOWN FAILURE (see bench/README.md): ${count.label}`)
    else if (!count.ok) problems.push(`count goal failed: ${count.label}`)
  }

if (problems.length > 0) {
  console.error(`\n${problems.join('\n')}`)
  process.exit(1)
}
if (sizes.smoke)
  console.log(`\nsmoke: ${rows.length} rows ran; the count goals hold (known failures aside).`)
// The jsdom window keeps timers alive.
process.exit(0)
