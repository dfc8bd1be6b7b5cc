/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run */
/**
 * `pnpm --filter @preview-chat/bench bench:reload` (issue 21): a reload of a recorded thread in
 * headless Chromium (Debian's), the demo's production build against the reference server, served
 * the way the e2e tests serve it (`e2e/app-server.ts`), side by side with a floor page of the same
 * origin (`floor.tsx`: one fetch of the same history, `JSON.parse`, a plain React render).
 *
 * Each measurement opens a fresh browser context (alice's cookie), visits the thread, waits for
 * it to be on screen and one more second (the page settled), then reloads it: what is timed is the reloaded document, from its
 * navigation start (`performance.timeOrigin`; every `performance.now()` of the page counts from
 * it) to the last recorded message's text in the DOM (a MutationObserver installed before any
 * script of the page, `observer.ts`), and for a thread with a running turn to the live answer
 * growing again. Threads: 200 and 2,000 recorded messages, and 200 recorded + a `/long` turn
 * running (a fresh thread per measurement, the turn started over HTTP and stopped once
 * measured). One untimed warm-up round of every contender on every thread, then `--rounds`
 * (5) rounds, the order of ours and the floor rotated each round; every run is checked (the same
 * number of messages on screen, the marker in the same one). Flags: `--rounds=N`, `--no-build`
 * (use examples/chat-app/dist as it is), `--build-if-missing` (build only when there is no
 * examples/chat-app/dist/index.html), `--kinds=0,1`, `--contenders=readme,floor`.
 *
 * Issue 36: `--throttle=4,1` measures every reload at each CPU throttling rate (Chromium's
 * `Emulation.setCPUThrottlingRate` over CDP, set on the page before its first visit; 4 is
 * Lighthouse's mobile setting; 1 is none), the rates rotated with the contenders; `--runs=N` runs
 * the whole thing N times (each run its own warm-up and rounds, and its load average at its start
 * and end); `--no-warm-up` leaves the warm-up out (row P1's smoke, which times nothing);
 * `--json=FILE` writes each run's medians, spreads and ratios over the floor (and the count of
 * reloads checked) for `pnpm bench`'s row P1 (`src/rows/throttle.ts`).
 */
import { chromium, type Browser, type Page } from '@playwright/test'
import { createMemoryStore, createPreviewChatBackend } from '@preview-chat/server'
import { startPreviewChatServer } from '@preview-chat/server/node'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startAppServer } from '../../../e2e/app-server'
import { chromiumLaunchOptions } from '../../../e2e/chromium'
import { median } from '../method'
import { buildPage, buildPagesWithVite } from './pages'
import { observerScript, type ObserverConfig, type Observed } from './observer'
import { dropThread, markerFor, seedThread, startRunningTurn, stopTurn, user } from './seed'

const repo = fileURLToPath(new URL('../../../', import.meta.url))
const demoDist = join(repo, 'examples/chat-app/dist')
const flag = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
const rounds = Number(flag('rounds') ?? 5)
const runCount = Number(flag('runs') ?? 1)
/** CPU throttling rates (1: none); every reload is measured at each. */
const rates = (flag('throttle') ?? '1').split(',').map(Number)
if (rates.some((r) => !(r >= 1))) throw new Error(`--throttle: rates ≥ 1, not ${flag('throttle')}`)
const jsonPath = flag('json')
/**
 * `--builder=vite` builds the floor and README pages with `vite build` (production), as an app
 * builds its page; `esbuild` (the default until issue 46) bundles them with esbuild.
 */
const builder = flag('builder') ?? 'esbuild'
if (builder !== 'vite' && builder !== 'esbuild')
  throw new Error(`--builder: vite or esbuild, not ${builder}`)
/**
 * `--visit=cold` times the first visit of a fresh browser context (nothing cached: HTTP, V8's
 * code, the page's process); `reload` (the default) times the reload after that visit.
 */
const visit = flag('visit') ?? 'reload'
/**
 * `--cpu`: a Chromium trace of every timed load, and from it the page's main-thread CPU time
 * (the trace's thread time, which neither the throttle's pauses nor other processes on the
 * machine add to) from the navigation to the last message in the DOM, and from the history read's
 * `responseEnd` to it: what a loaded machine moves least.
 */
const cpu = process.argv.includes('--cpu')
if (visit !== 'cold' && visit !== 'reload') throw new Error(`--visit: cold or reload, not ${visit}`)
/** `--no-warm-up` (the smoke of row P1 only): no untimed round first. */
const warmUp = !process.argv.includes('--no-warm-up')
const deltaMs = 25
const snapshotMs = 100
/** The demo's empty-thread text (examples/chat-app/src/components/Transcript.tsx). */
const emptyText = 'No messages yet.'

/**
 * `ours`: the demo; `persisted`: the demo with `persistTranscripts()` (its `?persist=1`); `readme`:
 * the root README's usage rendering the floor's markup (`readme.tsx`), `readmePrefetch` the same
 * with the README's `client.prefetch` at module evaluation (issue 30).
 */
type Contender = 'ours' | 'persisted' | 'readme' | 'readmePrefetch' | 'floor'
const isFloorMarkup = (c: Contender) => c === 'floor' || c === 'readme' || c === 'readmePrefetch'
interface ThreadKind {
  name: string
  recorded: number
  running: boolean
}
const allKinds: ThreadKind[] = [
  { name: '200 messages', recorded: 200, running: false },
  { name: '2,000 messages', recorded: 2000, running: false },
  { name: '200 messages + a turn running', recorded: 200, running: true },
]
// `--kinds=0,1` and `--contenders=readme,floor` run a part of the row.
const kindsArg = flag('kinds')
const kinds = kindsArg ? kindsArg.split(',').map((i) => allKinds[Number(i)]!) : allKinds

interface Measurement {
  transcript: number
  frame: number
  grew: number | null
  grewBy: number | null
  requestStart: number
  /**
   * The first history read's `fetch` call (its entry's `startTime`) after the page's own code
   * began (`performance.mark('bench:page')`, set by the floor and README pages once every import
   * is evaluated): what the library adds before its read goes out. `null` on the demo.
   */
  readAfterCode: number | null
  responseEnd: number
  htmlEnd: number
  /** The previous document's unload handlers done (same origin, so exposed). */
  unloadEnd: number
  scriptStart: number
  scriptEnd: number
  reads: number
  longTasks: number
  longTaskMs: number
  longestTask: number
  /** Long tasks that started between the last message in the DOM and the frame that painted it. */
  longTaskMsToPaint: number
  emptyInDom: boolean
  emptyPainted: boolean
  /**
   * Every history read of the load, until a second after the transcript was on screen (the push
   * channel's connection asks for one), and the bytes they transferred (Resource Timing's
   * `transferSize`: headers and body as received; a 304 is its headers), with their statuses:
   * of the first visit (`cold`) and of the reload.
   */
  loadReads: { cold: ReadSeen[]; reload: ReadSeen[] }
  /** The CPU throttling rate of the reload (1: none). */
  rate: number
  /** `--cpu`: main-thread CPU time (ms) to the last message in the DOM, and after the read. */
  cpuToMarker: number | null
  cpuAfterRead?: number | null
}
interface ReadSeen {
  bytes: number
  status: number
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
const loadAtStart = load()
const loadNow = () => loadavg().map((l) => Number(l.toFixed(2)))
const started = performance.now()
const log = (line: string) => process.stderr.write(`${line}\n`)

// --- inputs, all before any timer -------------------------------------------------------------

const contenders = (flag('contenders')?.split(',') ?? [
  'ours',
  'persisted',
  'readme',
  'readmePrefetch',
  'floor',
]) as Contender[]
if (!contenders.includes('floor')) contenders.push('floor')
/** The demo is built and served only when one of its pages is measured. */
const demoMeasured = contenders.some((c) => !isFloorMarkup(c))
const built = existsSync(join(demoDist, 'index.html'))
if (
  demoMeasured &&
  !process.argv.includes('--no-build') &&
  !(built && process.argv.includes('--build-if-missing'))
) {
  log('building the demo (pnpm --filter @preview-chat/example-chat-app build)…')
  execFileSync('pnpm', ['--filter', '@preview-chat/example-chat-app', 'build'], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}
const root = await mkdtemp(join(tmpdir(), 'bench-reload-'))
if (demoMeasured) await cp(demoDist, root, { recursive: true })
// What the app server answers for a path it has no file for (the browser's /favicon.ico).
else await writeFile(join(root, 'index.html'), '<!doctype html>\n')
let floorBytes: number
let readmeBytes: number
if (builder === 'vite') {
  // The way an app builds its page (issue 46): `vite build`, production.
  const sizes = await buildPagesWithVite(root)
  floorBytes = sizes['bench-floor']!
  readmeBytes = sizes['bench-readme']!
} else {
  floorBytes = await buildPage({
    entry: './floor.tsx',
    script: join(root, 'bench-floor.js'),
    html: join(root, 'bench-floor.html'),
    src: '/bench-floor.js',
    title: 'floor',
    minify: true,
  })
  readmeBytes = await buildPage({
    entry: './readme.tsx',
    script: join(root, 'bench-readme.js'),
    html: join(root, 'bench-readme.html'),
    src: '/bench-readme.js',
    title: 'README usage',
    minify: true,
  })
}

const store = createMemoryStore()
const backend = createPreviewChatBackend({ dev: true, store, deltaMs, snapshotMs })
const server = await startPreviewChatServer({ dev: true, port: 0, backend })
const app = await startAppServer({ root, target: server.url })
const staticThreads = new Map<string, { id: string; marker: string }>()
for (const kind of kinds)
  if (!kind.running) {
    const id = crypto.randomUUID()
    staticThreads.set(kind.name, { id, marker: seedThread(store, id, kind.recorded) })
  }
const browser: Browser = await chromium.launch(chromiumLaunchOptions)

// --- one measurement ----------------------------------------------------------------------------

function urlOf(contender: Contender, threadId: string): string {
  const path =
    contender === 'floor'
      ? '/bench-floor.html'
      : isFloorMarkup(contender)
        ? '/bench-readme.html'
        : '/'
  const extra =
    contender === 'persisted' ? '&persist=1' : contender === 'readmePrefetch' ? '&prefetch=1' : ''
  return `${app.url}${path}?thread=${encodeURIComponent(threadId)}${extra}`
}

/** The history reads a page made so far, with their bytes and statuses. */
const readsSeen = (page: Page) =>
  page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => e as PerformanceResourceTiming)
      .filter((e) => e.name.includes('/messages'))
      .map((e) => ({ bytes: e.transferSize, status: e.responseStatus })),
  )

async function measure(contender: Contender, kind: ThreadKind, rate: number): Promise<Measurement> {
  let threadId: string
  let marker: string
  let executionId: string | null = null
  if (kind.running) {
    threadId = crypto.randomUUID()
    marker = markerFor(threadId)
    seedThread(store, threadId, kind.recorded, 'recorded') // the marker goes to the turn
    // The turn's user message carries the marker (its text is final; the answer grows).
    const recorded = await startRunningTurn(server.url, threadId, marker, 8, 4000)
    executionId = recorded
  } else ({ id: threadId, marker } = staticThreads.get(kind.name)!)
  const expectedItems = kind.recorded + (kind.running ? 2 : 0)
  const markerIndex = kind.recorded + (kind.running ? 0 : -1)

  const config: ObserverConfig = {
    marker,
    emptyText,
    itemSelector: isFloorMarkup(contender) ? 'li.m' : 'article.message',
    growSelector:
      !isFloorMarkup(contender) && kind.running ? '[data-testid="message-assistant"]' : null,
  }
  const context = await browser.newContext({ viewport: { width: 1100, height: 750 } })
  try {
    await context.addCookies([{ name: 'preview-chat-user', value: user, url: app.url }])
    await context.addInitScript(observerScript(config))
    let done: () => void = () => {}
    await context.exposeBinding('__benchDone', () => done())
    const shown = () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('not on screen after 60 s')), 60_000)
        done = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    const page = await context.newPage()
    if (rate !== 1) {
      // For the target, so across its navigations: the first visit and the reload alike.
      const cdp = await context.newCDPSession(page)
      await cdp.send('Emulation.setCPUThrottlingRate', { rate })
    }
    let waiting = shown()
    let trace: Promise<Buffer> | null = null
    const traced = async () => {
      if (!cpu) return
      await browser.startTracing(page, { categories: traceCategories })
      trace = waiting.then(() => browser.stopTracing())
    }
    if (visit === 'cold') await traced()
    await page.goto(urlOf(contender, threadId), { waitUntil: 'commit' })
    await waiting
    let cold: ReadSeen[] = []
    if (visit === 'reload') {
      // A page one has been reading: its own work after the first paint done before the reload.
      await page.waitForTimeout(1000)
      cold = await readsSeen(page)
      waiting = shown()
      await traced()
      await page.reload({ waitUntil: 'commit' })
      await waiting
    }
    const traceBytes = trace ? await (trace as Promise<Buffer>) : null
    // The empty text's frame check, late long-task entries, the read after the push connects.
    await page.waitForTimeout(1000)
    const reload = await readsSeen(page)
    if (visit === 'cold') cold = reload
    const seen = await page.evaluate(
      ({ itemSelector, marker }) => {
        const b = (window as unknown as { __bench: Observed }).__bench
        const items = [...document.querySelectorAll(itemSelector)]
        const resources = performance
          .getEntriesByType('resource')
          .map((e) => e as PerformanceResourceTiming)
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming
        return {
          b,
          count: items.length,
          markerAt: items.findIndex((item) => item.textContent?.includes(marker)),
          navigationType: nav.type,
          pageMark: performance.getEntriesByName('bench:page')[0]?.startTime ?? null,
          htmlEnd: nav.responseEnd,
          unloadEnd: nav.unloadEventEnd,
          reads: resources
            .filter((e) => e.name.includes('/messages'))
            .map((e) => [e.startTime, e.requestStart, e.responseEnd]),
          scripts: resources
            .filter((e) => e.name.endsWith('.js'))
            .map((e) => [e.startTime, e.responseEnd]),
        }
      },
      { itemSelector: config.itemSelector, marker },
    )
    const { b } = seen
    const fail = (what: string) => {
      throw new Error(`${contender}, ${kind.name}, CPU ×${rate}: ${what}`)
    }
    const navigation = visit === 'reload' ? 'reload' : 'navigate'
    if (seen.navigationType !== navigation) fail(`navigation type ${seen.navigationType}`)
    // The demo renders a long thread's newest 60 messages first (Transcript.tsx), the rest in a
    // transition right after: at the marker, at least those; after the wait, every one.
    const atMarker = isFloorMarkup(contender) ? expectedItems : Math.min(expectedItems, 60)
    if (seen.count !== expectedItems || b.items < atMarker)
      fail(`${b.items} messages at the marker, ${seen.count} after it; expected ${expectedItems}`)
    if (seen.markerAt !== markerIndex)
      fail(`marker in message ${seen.markerAt}, not ${markerIndex}`)
    const first = seen.reads[0]
    if (!first) fail('no history read')
    const before = b.longTasks.filter(([start]) => start < b.marker!)
    return {
      transcript: b.marker!,
      frame: b.markerFrame!,
      grew: b.grew,
      grewBy: b.grew === null ? null : b.grewLength! - b.baseLength!,
      requestStart: first![1]!,
      readAfterCode: seen.pageMark === null ? null : first![0]! - seen.pageMark,
      responseEnd: first![2]!,
      htmlEnd: seen.htmlEnd,
      unloadEnd: seen.unloadEnd,
      scriptStart: Math.min(...seen.scripts.map(([start]) => start!)),
      // The scripts asked for before the last message was in the DOM: not a chunk the page
      // loads later (the demo's markdown, once an answer is near the view).
      scriptEnd: Math.max(
        ...seen.scripts.filter(([start]) => start! < b.marker!).map(([, end]) => end!),
      ),
      longTaskMsToPaint: b.longTasks
        .filter(([start]) => start >= b.marker! && start < b.markerFrame!)
        .reduce((sum, [, duration]) => sum + duration, 0),
      reads: seen.reads.filter(([start]) => start! < b.marker!).length,
      longTasks: before.length,
      longTaskMs: before.reduce((sum, [, duration]) => sum + duration, 0),
      longestTask: Math.max(0, ...before.map(([, duration]) => duration)),
      emptyInDom: b.empty.length > 0,
      emptyPainted: b.emptyPainted,
      loadReads: { cold, reload },
      rate,
      ...(traceBytes
        ? mainThreadCpu(traceBytes, first![2]!)
        : { cpuToMarker: null, cpuAfterRead: null }),
    }
  } finally {
    await context.close()
    if (executionId) {
      await stopTurn(server.url, threadId, executionId)
      dropThread(store, threadId)
    }
  }
}

// --- main-thread CPU time, from a trace (`--cpu`) ----------------------------------------------

const traceCategories = ['toplevel', 'blink.user_timing', '__metadata']

interface TraceEvent {
  name: string
  ph: string
  pid: number
  tid: number
  ts: number
  tts?: number
  dur?: number
  tdur?: number
  args?: { name?: string }
}

/**
 * The page's main-thread CPU time (thread time, ms) from its navigation start to the last
 * message in the DOM (`performance.mark('bench:marker')`, `observer.ts`), and from `responseEnd`
 * (ms after the navigation start) to it: the top-level tasks of the main thread that marked it,
 * the one that holds the mark counted to the mark.
 */
function mainThreadCpu(
  bytes: Buffer,
  responseEnd: number,
): { cpuToMarker: number; cpuAfterRead: number } {
  const parsed = JSON.parse(bytes.toString('utf8')) as TraceEvent[] | { traceEvents: TraceEvent[] }
  const events = Array.isArray(parsed) ? parsed : parsed.traceEvents
  const marker = events.find((e) => e.name === 'bench:marker')
  if (!marker || marker.tts === undefined) throw new Error('--cpu: no bench:marker in the trace')
  const starts = events.filter(
    (e) => e.name === 'navigationStart' && e.pid === marker.pid && e.ts <= marker.ts,
  )
  const navigation = starts[starts.length - 1]
  if (!navigation) throw new Error('--cpu: no navigationStart before the marker in the trace')
  // The thread's top-level events (a task, or a microtask checkpoint outside one): every complete
  // event of the thread not inside another one.
  const tasks: TraceEvent[] = []
  const ofThread = events
    .filter(
      (e) =>
        e.ph === 'X' &&
        e.pid === marker.pid &&
        e.tid === marker.tid &&
        e.dur !== undefined &&
        e.tdur !== undefined &&
        e.tts !== undefined,
    )
    .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!)
  for (const e of ofThread) {
    const last = tasks[tasks.length - 1]
    if (!last || e.ts >= last.ts + last.dur!) tasks.push(e)
  }
  const cpuFrom = (from: number) => {
    let us = 0
    for (const task of tasks) {
      const end = task.ts + task.dur!
      if (end <= from || task.ts >= marker.ts) continue
      // The task that holds the mark: its thread time up to it. One that began before `from`:
      // its share after it, by wall time.
      const upTo = task.ts <= marker.ts && end > marker.ts ? marker.tts! - task.tts! : task.tdur!
      us += task.ts < from ? upTo * ((end - from) / task.dur!) : upTo
    }
    return us / 1000
  }
  return {
    cpuToMarker: cpuFrom(navigation.ts),
    cpuAfterRead: cpuFrom(navigation.ts + responseEnd * 1000),
  }
}

// --- the rounds ---------------------------------------------------------------------------------

/** Every contender at every rate: what a round rotates. */
const entries = contenders.flatMap((contender) => rates.map((rate) => ({ contender, rate })))
interface Run {
  loadStart: number[]
  loadEnd: number[]
  /** By `rate|contender|thread`. */
  results: Map<string, Measurement[]>
}
const runs: Run[] = []
/** Reloads measured and checked (`measure` throws on a failed check), warm-ups included. */
let checked = 0
for (let run = 0; run < runCount; run++) {
  const loadStart = loadNow()
  const results = new Map<string, Measurement[]>()
  for (let round = warmUp ? -1 : 0; round < rounds; round++) {
    const shift = ((round % entries.length) + entries.length) % entries.length
    const order = [...entries.slice(shift), ...entries.slice(0, shift)]
    for (const kind of kinds)
      for (const { contender, rate } of order) {
        const m = await measure(contender, kind, rate)
        checked++
        if (round < 0) continue
        const key = `${rate}|${contender}|${kind.name}`
        results.set(key, [...(results.get(key) ?? []), m])
      }
    log(
      `${runCount > 1 ? `run ${run + 1}, ` : ''}round ${round < 0 ? 'warm-up' : round + 1}: ${((performance.now() - started) / 1000).toFixed(0)} s; load ${load()}`,
    )
  }
  runs.push({ loadStart, loadEnd: loadNow(), results })
}
const chromiumVersion = browser.version()
await browser.close()
await app.close()
await server.close()
await rm(root, { recursive: true, force: true })

// --- the table ----------------------------------------------------------------------------------

const ms = (n: number) => (n >= 100 ? `${n.toFixed(0)} ms` : `${n.toFixed(1)} ms`)
const pick = (list: Measurement[], f: (m: Measurement) => number | null) =>
  list.map(f).filter((v): v is number => v !== null)
const minMed = (values: number[]) => `${ms(Math.min(...values))} / ${ms(median(values))}`
const dirty = execFileSync(
  'git',
  ['status', '--porcelain', '--', 'packages', 'examples/chat-app'],
  {
    cwd: repo,
    encoding: 'utf8',
  },
).trim()
const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
  cwd: repo,
  encoding: 'utf8',
}).trim()

console.log(
  `\npreview-chat reload row — Chromium ${chromiumVersion} headless, Node ${process.version}, ${cpus().length} cores, ${new Date().toISOString()}, ${((performance.now() - started) / 1000).toFixed(0)} s; commit ${head}${dirty ? ' + uncommitted changes under packages/ or examples/chat-app' : ''}; load average (1/5/15 min) ${loadAtStart} at the start, ${load()} at the end; ${runCount > 1 ? `${runCount} runs, each ` : ''}${rounds} rounds after ${warmUp ? 'one warm-up' : 'no warm-up'}, ours and the floor rotated${rates.some((r) => r !== 1) ? ` (and the CPU throttling rates ${rates.map((r) => `${r}×`).join(', ')}; 1× is none)` : ''}; server deltaMs ${deltaMs}, snapshotMs ${snapshotMs}; floor bundle ${(floorBytes / 1024).toFixed(1)} KB min\n`,
)

// The page-load row of issue 30: every contender against the floor, reads and bytes beside.
const names: Record<Contender, string> = {
  readme: 'README usage',
  readmePrefetch: 'README usage + client.prefetch',
  ours: 'the demo',
  persisted: 'the demo, persistTranscripts()',
  floor: 'floor (fetch + JSON.parse + the same <li>s)',
}

/** Issue 21's and 30's tables, of one run at one rate: `results` by `contender|thread`. */
function report(results: Map<string, Measurement[]>): void {
  const readsOf = (list: Measurement[], which: 'cold' | 'reload') => {
    const reads = list.map((m) => m.loadReads[which])
    const counts = [...new Set(reads.map((r) => r.length))].join('–')
    const bytes = reads.map((r) => r.reduce((sum, read) => sum + read.bytes, 0))
    const statuses = [...new Set(reads.map((r) => r.map((read) => read.status).join('+')))].join(
      ', ',
    )
    return `${counts} (${statuses}), ${fmtKb(median(bytes))}`
  }
  const fmtKb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
  console.log(
    '| thread | page | last message in the DOM (min / median) | spread (max/min) | /floor (median) | /floor (by min) | painted /floor (median) | history requestStart (median) | read sent after the page’s code began (min / median) | reads per load, their statuses and history bytes transferred (median): first visit | the reload | long tasks > 50 ms before the transcript (reloads with one; longest) | empty text in the DOM / painted | in the DOM before the read answered (reloads) |',
  )
  console.log(
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  )
  for (const kind of kinds) {
    const floorList = results.get(`floor|${kind.name}`)!
    const fl = pick(floorList, (m) => m.transcript)
    const flFrame = pick(floorList, (m) => m.frame)
    for (const contender of contenders) {
      const list = results.get(`${contender}|${kind.name}`)!
      const t = pick(list, (m) => m.transcript)
      const frame = pick(list, (m) => m.frame)
      const long = list.filter((m) => m.longTasks > 0).length
      console.log(
        `| ${kind.name} | ${names[contender]} | ${minMed(t)} | ${((Math.max(...t) / Math.min(...t) - 1) * 100).toFixed(0)}% | ${(median(t) / median(fl)).toFixed(2)}× | ${(Math.min(...t) / Math.min(...fl)).toFixed(2)}× | ${(median(frame) / median(flFrame)).toFixed(2)}× | ${ms(median(pick(list, (m) => m.requestStart)))} | ${isFloorMarkup(contender) ? minMed(pick(list, (m) => m.readAfterCode)) : '–'} | ${readsOf(list, 'cold')} | ${readsOf(list, 'reload')} | ${long} of ${list.length}; ${ms(Math.max(0, ...pick(list, (m) => m.longestTask)))} | ${list.filter((m) => m.emptyInDom).length} / ${list.filter((m) => m.emptyPainted).length} | ${list.filter((m) => m.transcript < m.responseEnd).length} of ${list.length} |`,
      )
    }
  }
  console.log(`\n(README usage bundle ${(readmeBytes / 1024).toFixed(1)} KB min.)\n`)

  const full =
    kinds.length === allKinds.length &&
    contenders.includes('ours') &&
    contenders.includes('persisted')
  if (full) {
    console.log(
      '| thread | last message in the DOM: ours (min / median) | floor (min / median) | ours/floor (median; by min) | painted (the next frame rendered): ours | floor | ours/floor (median; by min) | history requestStart: ours / floor (median) | long tasks > 50 ms before the last message is in the DOM, ours: count, total (median) | floor | empty text in the DOM / painted (ours, reloads) |',
    )
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    for (const kind of kinds) {
      const ours = results.get(`ours|${kind.name}`)!
      const floor = results.get(`floor|${kind.name}`)!
      const lt = (list: Measurement[]) =>
        `${median(pick(list, (m) => m.longTasks))}, ${ms(median(pick(list, (m) => m.longTaskMs)))} (longest ${ms(Math.max(...pick(list, (m) => m.longestTask)))})`
      const side = (f: (m: Measurement) => number) => {
        const o = pick(ours, f)
        const fl = pick(floor, f)
        return `${minMed(o)} | ${minMed(fl)} | ${(median(o) / median(fl)).toFixed(2)}× (${(Math.min(...o) / Math.min(...fl)).toFixed(2)}×)`
      }
      console.log(
        `| ${kind.name} | ${side((m) => m.transcript)} | ${side((m) => m.frame)} | ${ms(median(pick(ours, (m) => m.requestStart)))} / ${ms(median(pick(floor, (m) => m.requestStart)))} | ${lt(ours)} | ${lt(floor)} | ${ours.filter((m) => m.emptyInDom).length} / ${ours.filter((m) => m.emptyPainted).length} of ${ours.length} |`,
      )
    }
    const running = kinds.find((k) => k.running)!
    console.log(
      '\nWith persistTranscripts (the transcript kept in the tab across the reload): | thread | last message in the DOM: persisted (min / median) | without (min / median) | persisted/without (median) | persisted/floor (median) |',
    )
    console.log('| --- | --- | --- | --- | --- |')
    for (const kind of kinds) {
      const kept = pick(results.get(`persisted|${kind.name}`)!, (m) => m.transcript)
      const without = pick(results.get(`ours|${kind.name}`)!, (m) => m.transcript)
      const floorOf = pick(results.get(`floor|${kind.name}`)!, (m) => m.transcript)
      console.log(
        `| ${kind.name} | ${minMed(kept)} | ${minMed(without)} | ${(median(kept) / median(without)).toFixed(2)}× | ${(median(kept) / median(floorOf)).toFixed(2)}× |`,
      )
    }

    const live = results.get(`ours|${running.name}`)!
    console.log(
      `\nLive text growing again after the reload (${running.name}, ours): ${minMed(pick(live, (m) => m.grew))} from navigation start; ${minMed(pick(live, (m) => (m.grew === null ? null : m.grew - m.transcript)))} after the transcript was on screen (the server records and announces the running answer every ${snapshotMs} ms); grown by ${median(pick(live, (m) => m.grewBy))} characters (median).`,
    )
  }
  console.log(
    '\nWhere the time goes (medians, ms from navigation start): | thread | contender | HTML received | old page unloaded | script requested | scripts received | history requestStart | history responseEnd | reads before the last message | last message in the DOM | long tasks from there to the paint | painted |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const kind of kinds)
    for (const contender of contenders) {
      const list = results.get(`${contender}|${kind.name}`)!
      const med = (f: (m: Measurement) => number) => ms(median(pick(list, f)))
      console.log(
        `| ${kind.name} | ${contender} | ${med((m) => m.htmlEnd)} | ${med((m) => m.unloadEnd)} | ${med((m) => m.scriptStart)} | ${med((m) => m.scriptEnd)} | ${med((m) => m.requestStart)} | ${med((m) => m.responseEnd)} | ${median(pick(list, (m) => m.reads))} | ${med((m) => m.transcript)} | ${med((m) => m.longTaskMsToPaint)} | ${med((m) => m.frame)} |`,
      )
    }
  console.log(`\nraw: ${JSON.stringify(Object.fromEntries(results))}`)
}

for (const [i, run] of runs.entries())
  for (const rate of rates) {
    if (runs.length > 1 || rates.length > 1 || rate !== 1)
      console.log(
        `\n#### Run ${i + 1} of ${runs.length}, CPU throttling ${rate}× (load average ${run.loadStart.join(' ')} at its start, ${run.loadEnd.join(' ')} at its end)\n`,
      )
    const byContender = new Map<string, Measurement[]>()
    for (const [key, list] of run.results)
      if (key.startsWith(`${rate}|`)) byContender.set(key.slice(key.indexOf('|') + 1), list)
    report(byContender)
  }

// --- issue 36: each run's medians over the floor, the time after the read, at every rate ----------

/** One page on one thread at one rate in one run: medians of its reloads, and over the floor's. */
export interface ThrottleCell {
  rate: number
  thread: string
  messages: number
  contender: Contender
  reloads: number
  /** Navigation start to the last message in the DOM (ms). */
  min: number
  median: number
  max: number
  /** The floor's median on the same thread at the same rate, and this page's over it. */
  floorMedian: number
  ratio: number
  /** The history read's `responseEnd` to the last message in the DOM (ms), median; the floor's. */
  afterRead: number
  floorAfterRead: number
  /** Painted (the frame after the last message in the DOM rendered), median; the floor's. */
  painted: number
  floorPainted: number
  /** `--cpu`: main-thread CPU time (ms) to the last message in the DOM, median; the floor's. */
  cpu?: number | null
  floorCpu?: number | null
  /** `--cpu`: the same from the read's `responseEnd`, median; the floor's. */
  cpuAfterRead?: number | null
  floorCpuAfterRead?: number | null
}
export interface ThrottleRun {
  loadStart: number[]
  loadEnd: number[]
  cells: ThrottleCell[]
}
export interface ThrottleReport {
  chromium: string
  commit: string
  dirty: boolean
  rounds: number
  rates: number[]
  /** Reloads measured and checked, warm-ups included. */
  checked: number
  runs: ThrottleRun[]
}

const throttleRuns: ThrottleRun[] = runs.map((run) => ({
  loadStart: run.loadStart,
  loadEnd: run.loadEnd,
  cells: rates.flatMap((rate) =>
    kinds.flatMap((kind) => {
      const floor = run.results.get(`${rate}|floor|${kind.name}`)!
      const floorMedian = median(floor.map((m) => m.transcript))
      const floorAfterRead = median(floor.map((m) => m.transcript - m.responseEnd))
      const floorPainted = median(floor.map((m) => m.frame))
      const cpuOf = (list: Measurement[], f: (m: Measurement) => number | null) => {
        const values = pick(list, f)
        return values.length > 0 ? median(values) : null
      }
      return contenders.map((contender): ThrottleCell => {
        const list = run.results.get(`${rate}|${contender}|${kind.name}`)!
        const t = list.map((m) => m.transcript)
        return {
          rate,
          thread: kind.name,
          messages: kind.recorded,
          contender,
          reloads: list.length,
          min: Math.min(...t),
          median: median(t),
          max: Math.max(...t),
          floorMedian,
          ratio: median(t) / floorMedian,
          afterRead: median(list.map((m) => m.transcript - m.responseEnd)),
          floorAfterRead,
          painted: median(list.map((m) => m.frame)),
          floorPainted,
          cpu: cpuOf(list, (m) => m.cpuToMarker ?? null),
          floorCpu: cpuOf(floor, (m) => m.cpuToMarker ?? null),
          cpuAfterRead: cpuOf(list, (m) => m.cpuAfterRead ?? null),
          floorCpuAfterRead: cpuOf(floor, (m) => m.cpuAfterRead ?? null),
        }
      })
    }),
  ),
}))
const cpuCells = (c: ThrottleCell) =>
  c.cpu == null
    ? ''
    : ` ${ms(c.cpu)} | ${ms(c.floorCpu!)} | ${(c.cpu / c.floorCpu!).toFixed(2)}× | ${ms(c.cpuAfterRead!)} | ${ms(c.floorCpuAfterRead!)} | ${(c.cpuAfterRead! / c.floorCpuAfterRead!).toFixed(2)}× |`
if (runs.length > 1 || rates.some((r) => r !== 1)) {
  console.log(
    `\nIssue 36, each run (${visit === 'cold' ? 'the first visit of a fresh browser context' : 'the reload after a visit'}; pages built by ${builder}): | run (load average 1/5/15 min at its start → end) | CPU | thread | page | last message in the DOM (min / median) | /floor (median) | spread (slowest/fastest) | the history read’s responseEnd → the last message in the DOM (median): page | floor | page/floor |${cpu ? ' main-thread CPU time to the last message in the DOM (median): page | floor | page/floor | after the read: page | floor | page/floor |' : ''}`,
  )
  console.log(
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |${cpu ? ' --- | --- | --- | --- | --- | --- |' : ''}`,
  )
  for (const [i, run] of throttleRuns.entries())
    for (const c of run.cells)
      console.log(
        `| ${i + 1} (${run.loadStart.join(' ')} → ${run.loadEnd.join(' ')}) | ${c.rate}× | ${c.thread} | ${names[c.contender]} | ${ms(c.min)} / ${ms(c.median)} | ${c.ratio.toFixed(2)}× | ${(c.max / c.min).toFixed(2)}× | ${ms(c.afterRead)} | ${ms(c.floorAfterRead)} | ${(c.afterRead / c.floorAfterRead).toFixed(2)}× |${cpuCells(c)}`,
      )
}
if (jsonPath) {
  const out: ThrottleReport = {
    chromium: chromiumVersion,
    commit: head,
    dirty: dirty !== '',
    rounds,
    rates,
    checked,
    runs: throttleRuns,
  }
  await writeFile(jsonPath, JSON.stringify(out, null, 2))
}
process.exit(0)
