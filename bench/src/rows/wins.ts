/**
 * The three wins of issue #15, each measured before and after in the same run: the code before
 * is the engine at 321d346, kept in src/before (history reads, the stream hot path); the bundle
 * before is built from that commit's sources (git archive), the bundle after from the worktree.
 */
import type { HistorySnapshot } from '@preview-chat/core'
import {
  applyTurnEvents,
  createTransport,
  markTruncated,
  readTurnStream,
  startTurn,
  type LiveTurn,
} from '@preview-chat/core/internal'
import { QueryClient } from '@tanstack/query-core'
import { parseHistorySnapshot as parseBefore } from '../before/snapshot'
import { markTruncated as markTruncatedBefore } from '../before/transcript'
import { readTurnStream as readTurnStreamBefore } from '../before/transport'
import {
  measureBundle,
  ourWhole,
  reactPeers,
  sourcesAt,
  tanstack,
  type BundleSize,
} from '../bundle'
import { contender, race, showTiming, spread, type Timing } from '../method'
import { fmt, type Row, type Sizes } from '../row'
import { SIZE_BUDGET_BYTES } from './bundle'
import { floor, DELTA_CHARS } from './pipeline'
import { answerChunks, answerText, key, ours, streamOf } from '../streams'
import { historyBody, transcript } from '../transcripts'

const LIMIT = 4000
const queryKey = ['history']
const show = (t: Timing) => `${showTiming(t, fmt.ms)} (spread ${spread(t).toFixed(0)}%)`
const gain = (before: Timing, after: Timing) =>
  `${(100 * (1 - after.min / before.min)).toFixed(0)}% less time by min, ${(100 * (1 - after.median / before.median)).toFixed(0)}% by median`

/** A history read as the session makes it: through a TanStack Query fetch, structural sharing included. */
async function readInto(client: QueryClient, read: () => Promise<HistorySnapshot>) {
  return client.fetchQuery({ queryKey, queryFn: read, staleTime: 0, retry: false })
}

function answer(body: string) {
  return new Response(body, { headers: { 'content-type': 'application/json' } })
}

/** Win 1: a read of a `count`-message thread whose last message changed since the last read. */
export async function readsRow({ smoke }: Sizes): Promise<Row> {
  const count = smoke ? 500 : 10_000
  const rounds = smoke ? 1 : 7
  const previous = historyBody(transcript(count, 0, true))
  const next = historyBody(transcript(count, 1, true))
  const check = (snapshot: HistorySnapshot) => {
    const part = snapshot.messages.at(-1)?.content.at(-1)
    if (
      snapshot.messages.length !== count ||
      part?.type !== 'text' ||
      part.text !== 'answer, version 1'
    )
      throw new Error('the read did not give the new transcript')
  }
  const transport = (body: () => string) =>
    createTransport({
      baseUrl: '/rest',
      fetch: async () => answer(body()),
      requestTimeoutMs: 60_000,
      timers: { setTimeout, clearTimeout, now: () => performance.now() },
    })
  const before = async (body: string): Promise<HistorySnapshot> => {
    // The transport of 321d346 did exactly this with the body: text, JSON.parse, full validation.
    const parsed = parseBefore(JSON.parse(await answer(body).text()))
    if (!parsed.success) throw parsed.error
    return markTruncatedBefore(parsed.value, LIMIT)
  }
  const t = await race(
    {
      before: contender({
        prepare: async () => {
          const client = new QueryClient()
          await readInto(client, () => before(previous))
          return client
        },
        run: (client) => readInto(client, () => before(next)),
        check,
      }),
      after: contender({
        prepare: async () => {
          let body = previous
          const reads = transport(() => body)
          const client = new QueryClient()
          await readInto(client, async () => markTruncated(await reads.readHistory(key), LIMIT))
          body = next
          return { client, reads }
        },
        run: ({ client, reads }) =>
          readInto(client, async () => markTruncated(await reads.readHistory(key), LIMIT)),
        check,
      }),
      // Today's validation with nothing to reuse (a transport that never read this thread), the
      // cache holding the previous read as above: what reusing the validated messages saves.
      afterNoReuse: contender({
        prepare: async () => {
          const client = new QueryClient()
          await readInto(client, async () =>
            markTruncated(await transport(() => previous).readHistory(key), LIMIT),
          )
          return { client, reads: transport(() => next) }
        },
        run: ({ client, reads }) =>
          readInto(client, async () => markTruncated(await reads.readHistory(key), LIMIT)),
        check,
      }),
    },
    { rounds, warmup: !smoke },
  )
  return {
    id: 'W1',
    name: 'Win 1: history reads',
    workload: `a read of a ${fmt.int(count)}-message thread (text, and a tool call with input and output on every 4th message; ${fmt.kb(next.length)} of JSON) whose last message changed since the last read`,
    method: `${rounds} rounds, rotated, GC before each, one warm-up round for all; min / median; the body prebuilt, answered as a Response; timed from the fetch to TanStack Query's cache holding the result (structural sharing against the previous read included), checked; before = 321d346 (the whole snapshot through valibot); after = the transport now (its own validation, only the changed messages validated); after without reuse = the same with every message validated`,
    ours: `after ${show(t.after)}`,
    peer: `before ${show(t.before)}; after without reuse (every message validated) ${show(t.afterNoReuse)}`,
    ratio: `after vs before: ${gain(t.before, t.after)}; of which reuse (after vs after without reuse): ${gain(t.afterNoReuse, t.after)}`,
    goal: '25–35% faster reads at 10k messages (issue #15)',
    met: smoke ? null : 1 - t.after.median / t.before.median >= 0.25,
  }
}

/** Win 2: turn stream bytes → events → the fold, without the session. */
export async function hotPathRow({ smoke }: Sizes): Promise<Row> {
  const deltas = smoke ? 500 : 100_000
  const rounds = smoke ? 1 : 7
  const bytes = answerChunks(ours, deltas, DELTA_CHARS)
  const expected = answerText(deltas, DELTA_CHARS)
  const check = (text: string) => {
    if (text !== expected)
      throw new Error(`produced ${text.length} chars, expected ${expected.length}`)
  }
  const options = { delegationCharLimit: LIMIT, now: () => 0 }
  const textOf = (turn: { assistant: LiveTurn['assistant'] }) => {
    const part = turn.assistant.content[0]
    return part?.type === 'text' ? part.text : ''
  }
  const start = { executionId: 'exec-1', sessionId: key.threadId, createdAt: 'x', message: 'hello' }
  const t = await race(
    {
      floor: contender({ prepare: () => streamOf(bytes), run: floor, check }),
      before: contender({
        prepare: () => streamOf(bytes),
        run: async (body) => {
          let turn = startTurn(start)
          await readTurnStreamBefore(
            body,
            (events) => void (turn = applyTurnEvents(turn, events, options)),
            new AbortController().signal,
          )
          return textOf(turn)
        },
        check,
      }),
      after: contender({
        prepare: () => streamOf(bytes),
        run: async (body) => {
          let turn = startTurn(start)
          await readTurnStream(
            body,
            (events) => void (turn = applyTurnEvents(turn, events, options)),
            new AbortController().signal,
          )
          return textOf(turn)
        },
        check,
      }),
    },
    { rounds, warmup: !smoke },
  )
  const x = (a: Timing, b: Timing) =>
    `${fmt.x(a.min / b.min)} (median ${fmt.x(a.median / b.median)})`
  return {
    id: 'W2',
    name: 'Win 2: stream hot path',
    workload: `${fmt.int(deltas)} text deltas of ${DELTA_CHARS} chars in 16 KB chunks (prebuilt) → readTurnStream → applyTurnEvents → the live turn`,
    method: `${rounds} rounds, rotated, GC before each, one warm-up round for all; min / median; the final text checked; before = 321d346 (eventsource-parser, a parse result and an event object per delta, deltas joined with += in the fold); after = eventsource-parser (again, since issue 21) under the reader that hands over each chunk's events, one JSON.parse per chunk where that is sure to give what one per event gives, deltas checked in place and joined once per chunk into a flat string; floor = eventsource-parser + JSON.parse`,
    ours: `after ${show(t.after)}`,
    peer: `before ${show(t.before)}; floor ${show(t.floor)}`,
    ratio: `after vs before: ${gain(t.before, t.after)}; before/floor ${x(t.before, t.floor)}; after/floor ${x(t.after, t.floor)}`,
    goal: '10–20% faster, to the floor (issue #15)',
    met: smoke ? null : t.after.median <= t.floor.median * 1.05,
  }
}

/** Win 3: the bundle of core + react, TanStack Query left out, before and after. */
export async function bundleWinRow(_sizes: Sizes): Promise<Row> {
  const external = [...reactPeers, ...tanstack]
  const after = await measureBundle(ourWhole, external)
  const sources = sourcesAt('321d346')
  let before: BundleSize | null = null
  if (sources) {
    try {
      before = await measureBundle(ourWhole, external, sources.alias)
    } finally {
      sources.remove()
    }
  }
  const size = (b: BundleSize) =>
    `${fmt.kb(b.gzipped)} gz, ${fmt.kb(b.brotli)} br (${fmt.kb(b.minified)} min)`
  // The bundle has grown past 321d346's since (the rules of issue 19, eventsource-parser back).
  const signedKb = (bytes: number) => `${bytes < 0 ? '−' : '+'}${fmt.kb(Math.abs(bytes))}`
  const signedPercent = (share: number) =>
    `${share < 0 ? '−' : '+'}${Math.abs(100 * share).toFixed(0)}%`
  return {
    id: 'W3',
    name: 'Win 3: bundle',
    workload: 'core + react, the whole API (export *), TanStack Query left out',
    method:
      'esbuild 0.28, minify, ESM, browser; gzip -9, brotli 11; before = the sources of 321d346 (git archive), after = this worktree',
    ours: `after ${size(after)}`,
    peer: before ? `before ${size(before)}` : 'before: not measured (no git history here)',
    ratio: before
      ? `after vs before: ${signedKb(after.gzipped - before.gzipped)} gz (${signedPercent(after.gzipped / before.gzipped - 1)}), ${signedKb(after.brotli - before.brotli)} br`
      : 'n/a',
    goal: `≤ ${fmt.kb(SIZE_BUDGET_BYTES)} gz (issue 21's budget; issue 15's 12 KB is retired)`,
    met: after.gzipped <= SIZE_BUDGET_BYTES,
  }
}
