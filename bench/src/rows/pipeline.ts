import { createParser } from 'eventsource-parser'
import { readWithAiSdk, uiMessageText } from '../aiSdk'
import { ourSession, runTurn } from '../ourSession'
import { fmt, type Row, type Sizes } from '../row'
import { aiSdk, answerStream, answerText, median, ours } from '../streams'

const DELTA_CHARS = 5

/** The floor: eventsource-parser and JSON.parse, nothing else (the text is concatenated only to check it). */
async function floor(body: ReadableStream<Uint8Array>): Promise<string> {
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

async function vercel(body: ReadableStream<Uint8Array>): Promise<string> {
  return uiMessageText(await readWithAiSdk(body))
}

async function preview(deltas: number): Promise<string> {
  const { session } = ourSession(() => answerStream(ours, deltas, DELTA_CHARS))
  return runTurn(session)
}

export async function pipelineRow({ smoke }: Sizes): Promise<Row> {
  const deltas = smoke ? 500 : 100_000
  const rounds = smoke ? 1 : 3
  const expected = answerText(deltas, DELTA_CHARS)
  const contenders = {
    floor: () => floor(answerStream(ours, deltas, DELTA_CHARS)),
    ours: () => preview(deltas),
    vercel: () => vercel(answerStream(aiSdk, deltas, DELTA_CHARS)),
  }
  const times: Record<keyof typeof contenders, number[]> = { floor: [], ours: [], vercel: [] }
  // One warm-up round, then interleaved rounds so that no contender always runs on a warmer JIT.
  for (let round = -1; round < rounds; round++) {
    for (const name of Object.keys(contenders) as (keyof typeof contenders)[]) {
      const start = performance.now()
      const text = await contenders[name]()
      const elapsed = performance.now() - start
      if (text !== expected)
        throw new Error(`row 1: ${name} produced ${text.length} chars, expected ${expected.length}`)
      if (round >= 0) times[name].push(elapsed)
    }
  }
  const rate = (ms: number) => deltas / (ms / 1000)
  const t = { floor: median(times.floor), ours: median(times.ours), vercel: median(times.vercel) }
  const vsFloor = t.ours / t.floor
  const vsVercel = t.vercel / t.ours
  return {
    id: 1,
    name: 'Stream pipeline',
    workload: `SSE bytes of one turn, ${fmt.int(deltas)} text deltas of ${DELTA_CHARS} chars, 16 KB chunks → final state`,
    method: `median of ${rounds} interleaved runs after a warm-up; ours = createPreviewChatClient session (parse, valibot, reducer, subscriber); floor = eventsource-parser + JSON.parse; AI SDK = parseJsonEventStream(uiMessageChunkSchema) → readUIMessageStream`,
    ours: `${fmt.rate(rate(t.ours))} ev/s (${fmt.ms(t.ours)})`,
    peer: `floor ${fmt.rate(rate(t.floor))} ev/s (${fmt.ms(t.floor)}); AI SDK ${fmt.rate(rate(t.vercel))} ev/s (${fmt.ms(t.vercel)})`,
    ratio: `ours/floor time ${fmt.x(vsFloor)}; AI SDK/ours time ${fmt.x(vsVercel)}`,
    goal: '≤ 2× the floor, ahead of the AI SDK',
    met: smoke ? null : vsFloor <= 2 && vsVercel > 1,
  }
}
