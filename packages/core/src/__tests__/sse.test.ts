/**
 * The SSE reader (issue 15, win 2): its own parser replaced eventsource-parser. For any event
 * stream — LF, CR and CRLF line ends, comments, `event:`/`id:`/`retry:` and unknown fields,
 * multi-line and empty data, a field with no colon — cut into network chunks anywhere (inside a
 * CRLF too), it dispatches the same data, in the same order, as eventsource-parser did.
 */
import { createParser } from 'eventsource-parser'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { assertSeeded } from './seeded'
import { createSseParser, readSse } from '../wire/sse'

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

/** Cuts `text` at the given fractions (sorted, deduplicated). */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((f) => Math.floor(f * text.length)))].sort((a, b) => a - b)
  const chunks: string[] = []
  let from = 0
  for (const point of points) {
    chunks.push(text.slice(from, point))
    from = point
  }
  chunks.push(text.slice(from))
  return chunks
}

function reference(chunks: string[]): string[] {
  const out: string[] = []
  const parser = createParser({ onEvent: (message) => void out.push(message.data) })
  for (const chunk of chunks) parser.feed(chunk)
  return out
}

function ours(chunks: string[]): string[] {
  const parser = createSseParser()
  return chunks.flatMap((chunk) => parser.feed(chunk))
}

describe('createSseParser', () => {
  it('dispatches what eventsource-parser dispatches, however the stream is cut [R-WIRE-SSE-READER]', () => {
    assertSeeded(
      'sse',
      fc.property(
        stream,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
        (text, at) => {
          const chunks = cut(text, at)
          expect(ours(chunks)).toEqual(reference(chunks))
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('reads the usual framing, comments and multi-line data [R-WIRE-SSE-FRAMING]', () => {
    const parser = createSseParser()
    expect(parser.feed(': ok\n\ndata: {"a":1}\n\nevent: x\nid: 7\ndata: a\ndata:b\n\n')).toEqual([
      '{"a":1}',
      'a\nb',
    ])
    // An event with no data line is not dispatched; an empty data line is.
    expect(parser.feed('event: y\n\ndata:\n\n')).toEqual([''])
  })

  it('joins a CRLF split across two chunks into one line end [R-WIRE-SSE-FRAMING]', () => {
    const parser = createSseParser()
    expect(parser.feed('data: a\r')).toEqual([])
    expect(parser.feed('\n\r\ndata: b\r\n\r')).toEqual(['a'])
    expect(parser.feed('\n')).toEqual(['b'])
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
