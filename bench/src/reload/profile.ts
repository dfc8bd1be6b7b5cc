/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run */
/**
 * `pnpm --filter @preview-chat/bench bench:reload:profile`: where a reload of the 2,000-message
 * thread spends the main thread, by package. Not a timed row: one CPU profile (V8's sampler
 * through CDP, 100 µs) per reload, over `--reloads` (3) reloads of the demo, from the reload to
 * the frame that painted the last message. The demo is built again *unminified* into a temporary directory
 * (`vite build --minify false`, which keeps a `// <module path>` line above every module), so that
 * each sample's line names its module; the code is otherwise the same production build.
 *
 * `--visit=cold`: the first visit of a fresh browser context instead of the reload after a visit
 * (what `bench:pageload` times). `--throttle=4`: the loads under a 4× CPU slowdown (CDP `Emulation.setCPUThrottlingRate`), as
 * issue 36 measures. `--page=floor`: the floor page instead (`floor.tsx`). `--no-profile`: the
 * times only, without the sampler's own cost. Each reload's **after the read** is printed too: the
 * first history read's `responseEnd` (Resource Timing) to the last message in the DOM; with
 * `--marks`, every `performance.mark` of the page as well, from that `responseEnd` (marks put in
 * the library by hand show where that interval goes). Besides self time, the library's functions
 * by total time (self and callees), and the native functions (fetch, addEventListener…) by the
 * page function that called them.
 */
import { chromium } from '@playwright/test'
import { createMemoryStore, createPreviewChatBackend } from '@preview-chat/server'
import { startPreviewChatServer } from '@preview-chat/server/node'
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startAppServer } from '../../../e2e/app-server'
import { chromiumLaunchOptions } from '../../../e2e/chromium'
import { observerScript } from './observer'
import { buildPage } from './pages'
import { seedThread, user } from './seed'

const repo = fileURLToPath(new URL('../../../', import.meta.url))
const reloads = Number(process.argv.find((a) => a.startsWith('--reloads='))?.slice(10) ?? 3)
const count = Number(process.argv.find((a) => a.startsWith('--messages='))?.slice(11) ?? 2000)
// `--page=readme`: the README usage page of the page-load row (`readme.tsx`, `&prefetch=1` with
// `--prefetch`) instead of the demo, built by esbuild unminified (a `// path` line per module).
const readmePage = process.argv.includes('--page=readme')
const floorPage = process.argv.includes('--page=floor')
const prefetch = process.argv.includes('--prefetch')
const throttle = Number(process.argv.find((a) => a.startsWith('--throttle='))?.slice(11) ?? 1)
const profiling = !process.argv.includes('--no-profile')
// `--visit=cold`: profile the first visit of a fresh browser context (nothing cached: V8's code,
// the page's process), as `bench:pageload` times it, instead of the reload after a visit.
const cold = process.argv.includes('--visit=cold')
const benchPage = readmePage || floorPage

const root = await mkdtemp(join(tmpdir(), 'bench-reload-profile-'))
if (benchPage) {
  await mkdir(join(root, 'assets'))
  const name = readmePage ? 'readme' : 'floor'
  await buildPage({
    entry: `./${name}.tsx`,
    script: join(root, 'assets', `bench-${name}.js`),
    html: join(root, 'index.html'),
    src: `/assets/bench-${name}.js`,
    title: readmePage ? 'README usage' : 'The floor',
    minify: false,
  })
} else
  execFileSync(
    'pnpm',
    [
      '--filter',
      '@preview-chat/example-chat-app',
      'exec',
      'vite',
      'build',
      '--minify',
      'false',
      '--outDir',
      root,
      '--emptyOutDir',
    ],
    { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] },
  )
/** The module of each line (0-based) of each chunk, from the `// path` line above each module. */
const moduleOfLine = new Map<string, string[]>()
for (const chunk of (await readdir(join(root, 'assets'))).filter((f) => f.endsWith('.js'))) {
  const lines = (await readFile(join(root, 'assets', chunk), 'utf8')).split('\n')
  const modules: string[] = []
  let current = '(bundle prelude)'
  for (const line of lines) {
    if (/^\/\/ (\.\.\/|\\0|src\/|\/|node_modules\/)/.test(line)) current = line.slice(3)
    modules.push(current)
  }
  moduleOfLine.set(chunk, modules)
}

function groupOf(module: string): string {
  if (/\/(react|react-dom|scheduler)\//.test(module)) return 'React (react, react-dom, scheduler)'
  if (module.includes('@tanstack')) return 'TanStack Query'
  if (module.includes('packages/core/')) return '@preview-chat/core'
  if (module.includes('packages/react/')) return '@preview-chat/react'
  if (module.includes('zustand')) return 'zustand'
  if (module.includes('node_modules')) return 'markdown (react-markdown, remark-gfm and their deps)'
  if (module.includes('reload/readme.tsx')) return 'the README page (readme.tsx)'
  if (module.includes('reload/floor.tsx')) return 'the floor page (floor.tsx)'
  if (module.startsWith('src/') || module.includes('chat-app/src')) return 'the demo app (src/)'
  return module
}

const store = createMemoryStore()
const backend = createPreviewChatBackend({ dev: true, store, deltaMs: 25, snapshotMs: 100 })
const server = await startPreviewChatServer({ dev: true, port: 0, backend })
const app = await startAppServer({ root, target: server.url })
const threadId = crypto.randomUUID()
const marker = seedThread(store, threadId, count)
const browser = await chromium.launch(chromiumLaunchOptions)

interface ProfileNode {
  id: number
  callFrame: { url: string; lineNumber: number; functionName: string }
  children?: number[]
}
const totals = new Map<string, number>()
const byFunction = new Map<string, number>()
const byModule = new Map<string, number>()
/** Native functions' self time, by the page's function that called them. */
const nativeCallers = new Map<string, number>()
/** Total time (self and callees) by function: each sample counts once for every function on its stack. */
const totalByFunction = new Map<string, number>()
let all = 0
/** Each reload's first history read's `responseEnd` to the last message in the DOM (ms). */
const afterRead: number[] = []
for (let r = 0; r < reloads; r++) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 750 } })
  await context.addCookies([{ name: 'preview-chat-user', value: user, url: app.url }])
  await context.addInitScript(
    observerScript({
      marker,
      emptyText: 'No messages yet.',
      itemSelector: benchPage ? 'li.m' : 'article.message',
      growSelector: null,
    }),
  )
  let done = () => {}
  await context.exposeBinding('__benchDone', () => done())
  const page = await context.newPage()
  const url = `${app.url}/?thread=${threadId}${prefetch ? '&prefetch=1' : ''}`
  let shown = new Promise<void>((resolve) => (done = resolve))
  if (!cold) {
    await page.goto(url, { waitUntil: 'commit' })
    await shown
  }
  const cdp = await context.newCDPSession(page)
  if (throttle !== 1) await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle })
  if (profiling) {
    await cdp.send('Profiler.enable')
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 })
    await cdp.send('Profiler.start')
  }
  shown = new Promise<void>((resolve) => (done = resolve))
  if (cold) await page.goto(url, { waitUntil: 'commit' })
  else await page.reload({ waitUntil: 'commit' })
  await shown
  if (process.argv.includes('--marks'))
    console.log(
      await page.evaluate(() => {
        const read = performance
          .getEntriesByType('resource')
          .find((e) => e.name.includes('/messages')) as PerformanceResourceTiming
        const marker = (window as unknown as { __bench: { marker: number } }).__bench.marker
        return [
          ...performance.getEntriesByType('mark').map((m) => [m.name, m.startTime] as const),
          ['(read responseEnd)', read.responseEnd] as const,
          ['(last message in the DOM)', marker] as const,
        ]
          .sort((x, y) => x[1] - y[1])
          .map(([name, t]) => `${(t - read.responseEnd).toFixed(1).padStart(8)}  ${name}`)
          .join('\n')
      }),
    )
  afterRead.push(
    await page.evaluate(() => {
      const read = performance
        .getEntriesByType('resource')
        .find((e) => e.name.includes('/messages')) as PerformanceResourceTiming
      return (
        (window as unknown as { __bench: { marker: number } }).__bench.marker - read.responseEnd
      )
    }),
  )
  if (!profiling) {
    await context.close()
    continue
  }
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as {
    profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }
  }
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const parentOf = new Map<number, number>()
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parentOf.set(child, node.id)
  /** A frame's function and module, as the tables name it (or null: not the page's own code). */
  const nameOf = (frame: ProfileNode['callFrame']): string | null => {
    const chunk = moduleOfLine.get(frame.url.split('/').pop() ?? '')
    if (!chunk) return null
    const module = chunk[frame.lineNumber] ?? '?'
    return `${frame.functionName || '(anonymous)'} (${module.replace(/.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, '').replace(/.*packages\//, '')}:${frame.lineNumber})`
  }
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id)!.callFrame
    const us = profile.timeDeltas[i + 1] ?? 100
    const onStack = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const name = nameOf(nodes.get(at)!.callFrame)
      if (name) onStack.add(name)
    }
    for (const name of onStack) totalByFunction.set(name, (totalByFunction.get(name) ?? 0) + us)
    let group: string
    const chunk = moduleOfLine.get(frame.url.split('/').pop() ?? '')
    if (chunk) {
      const module = chunk[frame.lineNumber] ?? '?'
      group = groupOf(module)
      byModule.set(module, (byModule.get(module) ?? 0) + us)
      const fn = nameOf(frame)!
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + us)
    } else if (frame.functionName === '(idle)') group = '(idle)'
    else if (frame.functionName === '(garbage collector)') group = 'garbage collection'
    else if (frame.functionName === '(program)')
      group = "the browser's own work outside scripts ((program): parsing, style, layout, paint)"
    else {
      group = frame.url
        ? `other script (${frame.url.split('/').pop()})`
        : `native: ${frame.functionName}`
      // The page's function that called the native one (the first frame of the page's code).
      let caller: string | null = null
      for (let at = parentOf.get(id); at !== undefined && !caller; at = parentOf.get(at))
        caller = nameOf(nodes.get(at)!.callFrame)
      const callerKey = `${frame.functionName} ← ${caller ?? '(no page code)'}`
      nativeCallers.set(callerKey, (nativeCallers.get(callerKey) ?? 0) + us)
    }
    totals.set(group, (totals.get(group) ?? 0) + us)
    all += us
  })
  await context.close()
}
await browser.close()
await app.close()
await server.close()
await rm(root, { recursive: true, force: true })

const ms = (us: number) => `${(us / 1000 / reloads).toFixed(0)} ms`
const pageName = readmePage ? 'the README usage page' : floorPage ? 'the floor' : 'the demo'
const sorted = afterRead.toSorted((a, b) => a - b)
console.log(
  `\nAfter the read (responseEnd to the last message in the DOM), ${pageName}, ${throttle}× CPU throttle${profiling ? ', profiled' : ''}: ${afterRead.map((t) => t.toFixed(1)).join(', ')} ms; min ${sorted[0]?.toFixed(1)}, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms`,
)
if (!profiling) process.exit(0)
console.log(
  `\nCPU profile of ${cold ? 'a first visit' : 'a reload'} of a ${count.toLocaleString('en-US')}-message thread (${pageName}, unminified production build, ${throttle}× CPU throttle), per reload, mean of ${reloads}: ${ms(all)} sampled from the reload to the frame that painted the last message\n`,
)
console.log('| self time in | per reload | share |\n| --- | ---: | ---: |')
for (const [group, us] of [...totals]
  .sort((a, b) => b[1] - a[1])
  .filter(([, us]) => us >= 1000 * reloads))
  console.log(`| ${group} | ${ms(us)} | ${((us / all) * 100).toFixed(0)}% |`)
console.log('\nTop modules:')
for (const [module, us] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(
    `  ${ms(us).padStart(7)}  ${module.replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '')}`,
  )
console.log('\nTop functions (self time):')
for (const [fn, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30))
  console.log(`  ${ms(us).padStart(7)}  ${fn}`)
console.log('\nNative functions by their caller in the page (self time):')
for (const [fn, us] of [...nativeCallers].sort((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(`  ${ms(us).padStart(7)}  ${fn}`)
console.log('\nTop functions of the library (total time: self and callees):')
for (const [fn, us] of [...totalByFunction]
  .filter(([fn]) => /core\/src|react\/src|@tanstack|zustand/.test(fn))
  .sort((a, b) => b[1] - a[1])
  .slice(0, 80))
  console.log(`  ${ms(us).padStart(7)}  ${fn}`)
process.exit(0)
