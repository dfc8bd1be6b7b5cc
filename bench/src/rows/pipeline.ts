import { createParser } from 'eventsource-parser'
import { readWithAiSdk, uiMessageText } from '../aiSdk'
import { langGraphReader } from '../langGraph'
import { contender, race, showTiming, spread, type Contender, type Timing } from '../method'
import { ourSession, runTurn } from '../ourSession'
import { fmt, type Row, type Sizes } from '../row'
import { aiSdk, answerChunks, answerText, langGraph, ours, streamOf } from '../streams'

export const DELTA_CHARS = 5

/** The floor: eventsource-parser and JSON.parse, nothing else (the text is concatenated only to check it). */
export async function floor(body: ReadableStream<Uint8Array>): Promise<string> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const parser = createParser({
    onEvent(message) {
      const event = JSON.parse(message.data) as { type: string; delta?: string }
      if (event.type === 'text-delta') text += event.delta
    },
  })
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parser.feed(decoder.decode(value, { stream: true }))
  }
  return text
}

/** The contenders of row 1 on `deltas` deltas; the bytes of each protocol are built once, ahead. */
export function pipelineContenders(deltas: number, peers: { aiSdk: boolean; langGraph: boolean }) {
  const expected = answerText(deltas, DELTA_CHARS)
  const check = (text: string) => {
    if (text !== expected)
      throw new Error(`produced ${text.length} chars, expected ${expected.length}`)
  }
  const ourBytes = answerChunks(ours, deltas, DELTA_CHARS)
  const contenders: Record<string, Contender<unknown, unknown>> = {
    floor: contender({ prepare: () => streamOf(ourBytes), run: floor, check }),
    ours: contender({
      prepare: () => ourSession(() => streamOf(ourBytes)).session,
      run: (session) => runTurn(session),
      check,
    }),
  }
  if (peers.aiSdk) {
    const bytes = answerChunks(aiSdk, deltas, DELTA_CHARS)
    contenders.aiSdk = contender({
      prepare: () => streamOf(bytes),
      run: async (body) => uiMessageText(await readWithAiSdk(body)),
      check,
    })
  }
  if (peers.langGraph) {
    const bytes = answerChunks(langGraph, deltas, DELTA_CHARS)
    contenders.langGraph = contender({
      prepare: () => langGraphReader(() => streamOf(bytes)),
      run: (reader) => reader.read(),
      check,
    })
  }
  return contenders
}

export async function pipelineRow({ smoke }: Sizes): Promise<Row> {
  const deltas = smoke ? 500 : 100_000
  const rounds = smoke ? 1 : 5
  const t = (await race(pipelineContenders(deltas, { aiSdk: true, langGraph: true }), {
    rounds,
    warmup: !smoke,
  })) as Record<'floor' | 'ours' | 'aiSdk' | 'langGraph', Timing>
  const rate = (ms: number) => `${fmt.rate(deltas / (ms / 1000))} ev/s`
  const show = (x: Timing) =>
    `${showTiming(x, fmt.ms)} (${rate(x.median)}; spread ${spread(x).toFixed(0)}%)`
  const vsFloor = { min: t.ours.min / t.floor.min, median: t.ours.median / t.floor.median }
  const by = (peer: Timing) =>
    `${fmt.x(peer.min / t.ours.min)} (median ${fmt.x(peer.median / t.ours.median)})`
  return {
    id: 1,
    name: 'Stream pipeline',
    workload: `SSE bytes of one turn, ${fmt.int(deltas)} text deltas of ${DELTA_CHARS} chars in 16 KB network chunks (built before timing) → final state`,
    method: `${rounds} rounds, rotated order, GC before each run, one warm-up round for every contender; min / median; the final text checked for each; ours = createPreviewChatClient session (its SSE reader, a delta in the servers' form read in place and JSON.parse for any other event, the fold, the session's state, one subscriber); floor = eventsource-parser + JSON.parse; AI SDK = parseJsonEventStream(uiMessageChunkSchema) → readUIMessageStream; LangGraph = useStream's custom-transport engine (FetchStreamTransport → StreamManager + MessageTupleManager, one subscriber, throttle off as by default)`,
    ours: show(t.ours),
    peer: `floor ${show(t.floor)}; AI SDK ${show(t.aiSdk)}; LangGraph ${show(t.langGraph)}`,
    ratio: `ours/floor ${fmt.x(vsFloor.min)} (median ${fmt.x(vsFloor.median)}); AI SDK/ours ${by(t.aiSdk)}; LangGraph/ours ${by(t.langGraph)}`,
    goal: '≤ 2× the floor, ahead of both peers',
    met: smoke
      ? null
      : vsFloor.median <= 2 && t.aiSdk.median > t.ours.median && t.langGraph.median > t.ours.median,
  }
}
