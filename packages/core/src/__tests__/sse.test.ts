/**
 * The SSE reader: eventsource-parser under one loop that hands over, per network chunk, the data
 * of the events that chunk completed. For any event stream — LF, CR and CRLF line ends, comments,
 * `event:`/`id:`/`retry:` and unknown fields, multi-line and empty data, a field with no colon —
 * cut into network chunks anywhere (inside a CRLF, inside a UTF-8 character too), it hands over
 * the same data, in the same order, as the whole stream fed at once.
 */
import { createParser } from 'eventsource-parser'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { assertSeeded } from './seeded'
import { readSse } from '../wire/sse'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

const lineEnd = fc.constantFrom('\n', '\r', '\r\n')
const value = fc.string({ maxLength: 8 }).map((text) => text.replace(/[\r\n]/g, ''))
const field = fc.oneof(
  value.map((v) => `data: ${v}`),
  value.map((v) => `data:${v}`),
  fc.constant('data'),
  value.map((v) => `event: ${v}`),
  value.map((v) => `id: ${v}`),
  fc.constant('retry: 100'),
  value.map((v) => `: ${v}`),
  value.map((v) => `x-unknown: ${v}`),
  value,
)
const block = fc
  .tuple(fc.array(fc.tuple(field, lineEnd), { maxLength: 4 }), lineEnd)
  .map(([lines, end]) => lines.map(([text, e]) => text + e).join('') + end)
const stream = fc.array(block, { maxLength: 8 }).map((blocks) => blocks.join(''))

function reference(chunks: string[]): string[] {
  const out: string[] = []
  const parser = createParser({ onEvent: (message) => void out.push(message.data) })
  for (const chunk of chunks) parser.feed(chunk)
  return out
}

/** A body that delivers these byte chunks. */
function bodyOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk)
      controller.close()
    },
  })
}

/** What readSse hands over for `text` cut into byte chunks at the given fractions. */
async function ours(text: string, at: number[]): Promise<string[][]> {
  const bytes = new TextEncoder().encode(text)
  const points = [...new Set(at.map((f) => Math.floor(f * bytes.length)))].sort((a, b) => a - b)
  const chunks: Uint8Array[] = []
  let from = 0
  for (const point of [...points, bytes.length]) {
    chunks.push(bytes.slice(from, point))
    from = point
  }
  const calls: string[][] = []
  await readSse(bodyOf(chunks), (data) => void calls.push(data))
  return calls
}

async function readAll(text: string): Promise<string[]> {
  return (await ours(text, [])).flat()
}

describe('readSse', () => {
  it('hands over what eventsource-parser dispatches, however the bytes are cut [R-WIRE-SSE-READER]', async () => {
    await assertSeeded(
      'sse',
      fc.asyncProperty(
        stream.map((text) => text.replace(/data: /, 'data: é✓ ')),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
        async (text, at) => {
          const calls = await ours(text, at)
          expect(calls.flat()).toEqual(reference([text]))
          // One call per chunk that completed events, never an empty one.
          expect(calls.every((data) => data.length > 0)).toBe(true)
        },
      ),
      { numRuns: 1_000 },
    )
  })

  it('reads the usual framing, comments and multi-line data [R-WIRE-SSE-FRAMING]', async () => {
    expect(await readAll(': ok\n\ndata: {"a":1}\n\nevent: x\nid: 7\ndata: a\ndata:b\n\n')).toEqual([
      '{"a":1}',
      'a\nb',
    ])
    // An event with no data line is not dispatched; an empty data line is.
    expect(await readAll('event: y\n\ndata:\n\n')).toEqual([''])
  })

  it('joins a CRLF split across two chunks into one line end [R-WIRE-SSE-FRAMING]', async () => {
    const text = 'data: a\r\n\r\ndata: b\r\n\r\n'
    const calls = await ours(text, [8 / text.length, 19 / text.length])
    expect(calls).toEqual([['a'], ['b']])
  })

  it('drops an event the stream ends before its blank line [R-WIRE-SSE-FRAMING]', async () => {
    const bytes = new TextEncoder().encode('data: one\n\ndata: two\n')
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes)
        controller.close()
      },
    })
    const seen: string[][] = []
    expect(await readSse(body, (data) => void seen.push(data))).toEqual({ kind: 'closed' })
    expect(seen).toEqual([['one']])
  })
})
