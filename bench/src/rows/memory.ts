import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { readWithAiSdk, uiMessageText } from '../aiSdk'
import { ourSession, runTurn } from '../ourSession'
import { fmt, type Row, type Sizes } from '../row'
import { aiSdk, answerStream, ours } from '../streams'

const DELTA_CHARS = 10

const gc = () => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (!collect) throw new Error('row 5 needs node --expose-gc (pnpm bench passes it)')
  collect()
}

/**
 * Samples the heap while a stream is read: `heapUsed` without a collection every 1,000 deltas
 * (peak including garbage not yet collected), and after a forced full GC every 10,000 deltas
 * (peak of what is retained). Growth is over a GC'd baseline taken before the run.
 */
function heapProbe() {
  gc()
  const base = process.memoryUsage().heapUsed
  let peak = 0
  let peakRetained = 0
  let nextSample = 1000
  let nextGc = 10_000
  return {
    onPull(sent: number) {
      if (sent >= nextSample) {
        nextSample += 1000
        peak = Math.max(peak, process.memoryUsage().heapUsed - base)
      }
      if (sent >= nextGc) {
        nextGc += 10_000
        gc()
        peakRetained = Math.max(peakRetained, process.memoryUsage().heapUsed - base)
      }
    },
    result: (kept: unknown) => {
      peak = Math.max(peak, process.memoryUsage().heapUsed - base)
      gc()
      peakRetained = Math.max(peakRetained, process.memoryUsage().heapUsed - base)
      void kept
      return { peak, peakRetained }
    },
  }
}

export async function oursRun(deltas: number) {
  const probe = heapProbe()
  const onPull = probe.onPull
  const { session } = ourSession(() =>
    answerStream(ours, deltas, DELTA_CHARS, { chunkBytes: 4096, onPull }),
  )
  const text = await runTurn(session)
  return { ...probe.result(text), chars: text.length }
}

export async function vercelRun(deltas: number) {
  const probe = heapProbe()
  const onPull = probe.onPull
  const body = answerStream(aiSdk, deltas, DELTA_CHARS, { chunkBytes: 4096, onPull })
  const last = await readWithAiSdk(body)
  const text = uiMessageText(last)
  return { ...probe.result(last), chars: text.length }
}

type Peak = Awaited<ReturnType<typeof oursRun>>

/**
 * One measurement in a process of its own (node with the same flags), so that what earlier rows
 * left on the heap (React trees, caches on timers) is not collected inside this one's numbers.
 */
function isolated(which: 'ours' | 'aiSdk', deltas: number): Peak {
  const child = fileURLToPath(new URL('../memoryChild.ts', import.meta.url))
  const out = execFileSync(process.execPath, [...process.execArgv, child, which, String(deltas)], {
    encoding: 'utf8',
  })
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as Peak
}

export async function memoryRow({ smoke }: Sizes): Promise<Row> {
  const bytes = smoke ? 20_000 : 1_000_000
  const deltas = bytes / DELTA_CHARS
  // Each side twice, alternating, in fresh processes; the lower peak of each is reported (a
  // peak can only be raised by noise: a collection that came late).
  const runs = smoke ? 1 : 2
  const mineRuns: Peak[] = []
  const peerRuns: Peak[] = []
  for (let i = 0; i < runs; i++) {
    mineRuns.push(isolated('ours', deltas))
    peerRuns.push(isolated('aiSdk', deltas))
  }
  const lowest = (list: Peak[]) => list.reduce((a, b) => (b.peakRetained < a.peakRetained ? b : a))
  const mine = lowest(mineRuns)
  const peer = lowest(peerRuns)
  if (mine.chars !== bytes || peer.chars !== bytes)
    throw new Error('row 5: an answer came out short')
  const show = (r: typeof mine) =>
    `peak retained +${fmt.mb(r.peakRetained)} (${fmt.x(r.peakRetained / bytes)} text); peak incl. garbage +${fmt.mb(r.peak)} (${fmt.x(r.peak / bytes)})`
  const ok = mine.peakRetained < 4 * bytes
  return {
    id: 5,
    name: 'Memory',
    workload: `one ${fmt.int(bytes)}-char answer in ${fmt.int(deltas)} deltas of ${DELTA_CHARS} chars (4 KB network chunks, generated as read)`,
    method:
      'each side in a fresh node --expose-gc process, twice, alternating (the lower peak kept); heapUsed over a GC’d baseline: after a forced GC every 10,000 deltas (retained) and without one every 1,000 deltas (incl. garbage); ours = session with a subscriber; AI SDK = readUIMessageStream, last message kept',
    ours: show(mine),
    peer: `AI SDK: ${show(peer)}`,
    ratio: `retained AI SDK/ours ${fmt.x(peer.peakRetained / Math.max(1, mine.peakRetained))}; incl. garbage ${fmt.x(peer.peak / Math.max(1, mine.peak))}`,
    goal: 'peak retained growth < 4× the text size',
    met: smoke ? null : ok,
  }
}
