/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run, as in tests */
import { composeTranscript, startTurn } from '@preview-chat/core/internal'
import { composeTranscript as composeBefore } from '../before/transcript'
import { race, contender, showTiming, type Timing } from '../method'
import { ourSession, prepareTurn } from '../ourSession'
import { fmt, type Row, type Sizes } from '../row'
import { answerChunks, answerText, ours, streamOf } from '../streams'
import { transcript } from '../transcripts'
import { pipelineContenders, DELTA_CHARS } from './pipeline'
import { replaceRace } from './replace'

const perDelta = (t: Timing, deltas: number) =>
  `${((t.min / deltas) * 1000).toFixed(2)} / ${((t.median / deltas) * 1000).toFixed(2)} µs`

/** S1: the pipeline at 1k to 1M deltas; time per delta must stay flat. */
export async function pipelineScalingRow({ smoke }: Sizes): Promise<Row> {
  const sizes = smoke ? [100, 1000] : [1000, 10_000, 100_000, 1_000_000]
  const rounds = smoke ? 1 : 5
  const lines: string[] = []
  const floors: string[] = []
  const ratios: string[] = []
  const oursPerDelta: number[] = []
  for (const deltas of sizes) {
    const t = (await race(pipelineContenders(deltas, { aiSdk: false, langGraph: false }), {
      rounds,
      warmup: !smoke,
    })) as Record<'floor' | 'ours', Timing>
    lines.push(`${fmt.int(deltas)}: ${perDelta(t.ours, deltas)}`)
    floors.push(`${fmt.int(deltas)}: ${perDelta(t.floor, deltas)}`)
    ratios.push(`${fmt.int(deltas)}: ${fmt.x(t.ours.median / t.floor.median)}`)
    oursPerDelta.push(t.ours.median / deltas)
  }
  // Flat: the largest size costs no more per delta than 1.5× the 10k one (the 1k one carries
  // the session's fixed cost).
  const reference = oursPerDelta[Math.min(1, oursPerDelta.length - 1)]!
  const flat = oursPerDelta.every((cost, i) => i < 1 || cost <= reference * 1.5)
  return {
    id: 'S1',
    name: 'Pipeline scaling',
    workload: `row 1's turn at ${sizes.map(fmt.int).join(', ')} deltas of ${DELTA_CHARS} chars`,
    method: `as row 1 (prebuilt bytes, ${rounds} rounds rotated, GC, warm-up for both, checked); time per delta, min / median`,
    ours: `ours per delta: ${lines.join('; ')}`,
    peer: `floor per delta: ${floors.join('; ')}`,
    ratio: `ours/floor by median: ${ratios.join('; ')}`,
    goal: 'time per delta flat from 10k to 1M deltas (≤ 1.5× the 10k cost)',
    met: smoke ? null : flat,
  }
}

/** S2: a snapshot replace at 100, 1,000 and 10,000 messages. */
export async function replaceScalingRow({ smoke }: Sizes): Promise<Row> {
  const counts = smoke ? [100] : [100, 1000, 10_000]
  const lines: string[] = []
  const peers: string[] = []
  const ratios: string[] = []
  let renders = 0
  for (const count of counts) {
    const replaces = count >= 10_000 ? 3 : 6
    const { ours, aiSdk } = await replaceRace(count, {
      replaces,
      rounds: smoke ? 1 : 5,
      warmup: !smoke,
      peer: true,
    })
    renders = Math.max(renders, ...ours.renders)
    lines.push(`${fmt.int(count)}: ${showTiming(ours.time, fmt.ms)}`)
    peers.push(`${fmt.int(count)}: ${showTiming(aiSdk!.time, fmt.ms)}`)
    ratios.push(`${fmt.int(count)}: ${fmt.x(aiSdk!.time.median / ours.time.median)}`)
  }
  return {
    id: 'S2',
    name: 'Replace scaling',
    workload: `row 3's replace at ${counts.map(fmt.int).join(', ')} messages`,
    method: `as row 3 (bodies prebuilt, 5 mounts per contender rotated with one warm-up mount each, 6 replaces per mount, 3 at 10,000; GC before each); min / median per replace`,
    ours: `usePreviewChat: ${lines.join('; ')} (at most ${renders} message render per replace)`,
    peer: `useChat setMessages: ${peers.join('; ')}`,
    ratio: `useChat/ours by median: ${ratios.join('; ')}`,
    goal: '1 message render per replace at every size',
    met: renders <= 1,
    counts: [{ label: `S2: at most ${renders} message renders per replace ≤ 1`, ok: renders <= 1 }],
  }
}

/** S3: streaming into a thread that already holds 2,000 messages. */
export async function longThreadRow({ smoke }: Sizes): Promise<Row> {
  const deltas = smoke ? 500 : 100_000
  const rounds = smoke ? 1 : 5
  // Earlier turns (their ids differ from the live turn's `exec-1`).
  const history = transcript(smoke ? 200 : 2000, 0, false, 'earlier')
  const expected = answerText(deltas, DELTA_CHARS)
  const check = (text: string) => {
    if (text !== expected)
      throw new Error(`produced ${text.length} chars, expected ${expected.length}`)
  }
  // Two framings: 16 KB network chunks (row 1), and one delta per chunk (a slow, token-paced
  // stream: one transcript composed per delta, the worst case for a long thread).
  const big = answerChunks(ours, deltas, DELTA_CHARS)
  const small = answerChunks(ours, deltas / 10, DELTA_CHARS, 1)
  const smallExpected = answerText(deltas / 10, DELTA_CHARS)
  const checkSmall = (text: string) => {
    if (text !== smallExpected) throw new Error('short answer')
  }
  const session = (bytes: Uint8Array[], withHistory: boolean) =>
    contender({
      prepare: () =>
        prepareTurn(ourSession(() => streamOf(bytes), withHistory ? { history } : {}).session),
      run: (turn) => turn.run(),
      check: bytes === big ? check : checkSmall,
    })
  const t = await race(
    {
      empty: session(big, false),
      long: session(big, true),
      emptySmall: session(small, false),
      longSmall: session(small, true),
    },
    { rounds, warmup: !smoke },
  )
  // composeTranscript alone, as the session calls it per chunk: before (321d346) and after.
  const live = startTurn({
    executionId: 'exec-live',
    sessionId: 's',
    createdAt: 'x',
    message: 'hi',
  })
  const calls = smoke ? 100 : 10_000
  const compose = (fn: typeof composeTranscript) =>
    contender({
      prepare: () => history,
      run: (recorded) => {
        let length = 0
        for (let i = 0; i < calls; i++) length += fn(recorded, live).length
        return length
      },
      check: (length: number) => {
        if (length !== calls * (history.length + 2)) throw new Error('wrong transcript')
      },
    })
  const c = await race(
    {
      before: compose(composeBefore as typeof composeTranscript),
      after: compose(composeTranscript),
    },
    { rounds, warmup: !smoke },
  )
  const per = (x: Timing, n: number) => `${((x.median / n) * 1000).toFixed(2)} µs`
  return {
    id: 'S3',
    name: 'Long thread',
    workload: `streaming ${fmt.int(deltas)} deltas (16 KB chunks) and ${fmt.int(deltas / 10)} deltas (one per chunk) into a thread that holds ${fmt.int(history.length)} messages, against an empty thread`,
    method: `a session with a subscriber, its first read done before timing; ${rounds} rounds rotated, GC, warm-up for all, checked; min / median; and composeTranscript alone (${fmt.int(calls)} calls on ${fmt.int(history.length)} messages + a live turn), 321d346 against now`,
    ours: `16 KB chunks: ${show(t.long)} with ${fmt.int(history.length)} messages, ${show(t.empty)} empty; one delta per chunk: ${show(t.longSmall)} with, ${show(t.emptySmall)} empty`,
    peer: `composeTranscript per call at ${fmt.int(history.length)} messages: before ${per(c.before, calls)}, after ${per(c.after, calls)}`,
    ratio: `long/empty by median: ${fmt.x(t.long.median / t.empty.median)} (16 KB chunks), ${fmt.x(t.longSmall.median / t.emptySmall.median)} (one delta per chunk); composeTranscript before/after ${fmt.x(c.before.median / c.after.median)}`,
    goal: 'a long thread streams about as fast as an empty one: long/empty ≤ 1.5× by median, both chunkings',
    met: smoke
      ? null
      : t.long.median / t.empty.median <= 1.5 && t.longSmall.median / t.emptySmall.median <= 1.5,
  }
}

const show = (t: Timing) => showTiming(t, fmt.ms)
