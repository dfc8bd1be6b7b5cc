import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { assertSeeded } from './seeded'
import type { TurnEvent } from '../contract'
import { createTransport, readTurnStream } from '../wire/transport'
import { applyTurnEvents, startTurn } from '../engine/fold'
import { key } from './harness'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

function hangingFetch() {
  const signals: AbortSignal[] = []
  const fetch = vi.fn((_input: RequestInfo | URL, init?: RequestInit) => {
    if (init?.signal) signals.push(init.signal)
    return new Promise<Response>((_, reject) =>
      init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
    )
  })
  return { fetch, signals }
}

describe('transport [R-WIRE-CREDENTIALS]', () => {
  it('passes the caller’s cancellation on to the request (TanStack Query cancelling a read)', async () => {
    const { fetch, signals } = hangingFetch()
    const timers = { setTimeout: vi.fn(() => 1), clearTimeout: vi.fn(), now: () => 0 }
    const transport = createTransport({ baseUrl: '/rest', fetch, requestTimeoutMs: 1_000, timers })
    const caller = new AbortController()
    const read = transport.readHistory(key, caller.signal)
    await Promise.resolve()
    caller.abort(new Error('cancelled by the caller'))
    await expect(read).rejects.toThrow()
    expect(signals[0]?.aborted).toBe(true)
    // The timeout went through the injected timers, and was cleared.
    expect(timers.setTimeout).toHaveBeenCalledWith(expect.any(Function), 1_000)
    expect(timers.clearTimeout).toHaveBeenCalledWith(1)
  })

  it('times out through the injected timers with a typed error', async () => {
    const { fetch } = hangingFetch()
    let fire = () => {}
    const timers = {
      setTimeout: (callback: () => void) => ((fire = callback), 2),
      clearTimeout: () => {},
      now: () => 0,
    }
    const transport = createTransport({ baseUrl: '/rest', fetch, requestTimeoutMs: 5, timers })
    const stop = transport.stopExecution(key, 'e1')
    await Promise.resolve()
    fire()
    await expect(stop).rejects.toMatchObject({ code: 'timeout' })
  })

  it('calls a headers function per request', async () => {
    const headers = vi.fn(() => ({ authorization: 'Bearer alice' }))
    const fetch = vi.fn(async () => Response.json({ data: { cancelRequested: true } }))
    const transport = createTransport({
      baseUrl: '/rest/',
      fetch,
      headers,
      requestTimeoutMs: 1_000,
      timers: { setTimeout: () => 0, clearTimeout: () => {}, now: () => 0 },
    })
    await transport.stopExecution(key, 'e1')
    await transport.stopExecution(key, 'e2')
    expect(headers).toHaveBeenCalledTimes(2)
    expect(fetch).toHaveBeenLastCalledWith(
      '/rest/projects/p1/agents/v2/a1/chat/t1/executions/e2',
      expect.objectContaining({
        method: 'DELETE',
        headers: expect.objectContaining({ authorization: 'Bearer alice' }),
      }),
    )
  })
})

describe('readTurnStream (the hot path)', () => {
  const body = (...chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk))
        controller.close()
      },
    })
  const sse = (value: unknown) =>
    `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`
  const delta = (id: string, text: string, type = 'text-delta') => sse({ type, id, delta: text })

  it('joins the consecutive deltas of a stream into one event per chunk, skipping what it reports [R-WIRE-ONE-PARSE]', async () => {
    const batches: TurnEvent[][] = []
    const warnings: string[] = []
    const end = await readTurnStream(
      body(
        sse({ type: 'execution-started', executionId: 'e', sessionId: 's' }) +
          delta('t', 'a') +
          sse('{not json') +
          delta('t', 'b') +
          sse({ type: 'source-url', url: 'x' }) +
          delta('t', 'c', 'reasoning-delta') +
          delta('u', 'd') +
          delta('u', 'e'),
        delta('u', 'f') + sse({ type: 'done' }) + delta('u', 'after the end'),
      ),
      (events) => void batches.push(events),
      new AbortController().signal,
      (message) => void warnings.push(message),
    )
    expect(end).toEqual({ kind: 'terminal' })
    expect(batches).toEqual([
      [
        { type: 'execution-started', executionId: 'e', sessionId: 's' },
        { type: 'text-delta', id: 't', delta: 'ab' },
        { type: 'reasoning-delta', id: 't', delta: 'c' },
        { type: 'text-delta', id: 'u', delta: 'de' },
      ],
      [{ type: 'text-delta', id: 'u', delta: 'f' }, { type: 'done' }],
    ])
    expect(warnings).toEqual([
      expect.stringMatching(/^Skipped a turn stream event: A turn stream event is not valid JSON/),
      expect.stringMatching(
        /^Skipped turn stream events of unknown type "source-url"\. .*#stream-event-skipped$/,
      ),
    ])
  })

  it('keeps only the contract’s fields of a delta, and reports a malformed one [R-WIRE-EVENTS]', async () => {
    const batches: TurnEvent[][] = []
    const warnings: string[] = []
    await readTurnStream(
      body(
        sse({ type: 'text-delta', id: 't', delta: 'a', extra: { x: 1 } }) +
          sse({ type: 'text-delta', id: 't', delta: 5 }) +
          sse({ type: 'error', message: 'no' }),
      ),
      (events) => void batches.push(events),
      new AbortController().signal,
      (message) => void warnings.push(message),
    )
    expect(batches).toEqual([
      [
        { type: 'text-delta', id: 't', delta: 'a' },
        { type: 'error', message: 'no' },
      ],
    ])
    expect(warnings).toEqual([expect.stringMatching(/^Skipped a turn stream event: .*delta: /)])
  })
})

describe('readTurnStream: a chunk reads as its events one by one, deltas read in place [R-WIRE-ONE-PARSE]', () => {
  const segment = fc.oneof(
    fc
      .string({ maxLength: 6 })
      .map((text) => JSON.stringify({ type: 'text-delta', id: 't', delta: text })),
    fc
      .string({ maxLength: 6 })
      .map((text) => JSON.stringify({ type: 'reasoning-delta', id: 'r', delta: text })),
    fc.constant(JSON.stringify({ type: 'text-start', id: 't' })),
    fc.constant(
      JSON.stringify({ type: 'tool-call', toolCallId: 'c', toolName: 'n', input: { a: {} } }),
    ),
    fc.constant(JSON.stringify({ type: 'source-url', url: 'x' })),
    fc.constant(JSON.stringify({ type: 'done' })),
    // Malformed events that, joined with their neighbours, could form valid JSON.
    fc.constantFrom(
      '{"a":"}',
      '{","b":1}',
      '{"type":"done"},{"type":"done"}',
      '{"type":"text-delta","id":"t","delta":"}',
      '{","x":"y"}',
      '{"x":[{}',
      '{}]}',
      '{}',
      '{',
      '}',
      '5',
      '[1',
      '2]',
      '{"type":"text-delta","id":"t","delta":"}"}',
      '{"type":"text-delta","id":"t","delta":"a"} ',
    ),
  )
  /** Two malformed events that, joined by a comma, are one valid event. */
  const merging = fc.constantFrom(
    ['{"a":"}', '{","b":1}'],
    ['{"type":"text-delta","id":"t","delta":"}', '{","x":"y"}'],
  )
  const runs = fc.oneof(
    segment.map((data) => [data]),
    merging,
  )
  const options = { delegationCharLimit: 100, now: () => 0 }

  async function fold(chunks: string[]) {
    let turn = startTurn({ executionId: 'e', sessionId: 's', createdAt: 'x', message: 'm' })
    const warnings: string[] = []
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk))
        controller.close()
      },
    })
    const end = await readTurnStream(
      body,
      (events) => void (turn = applyTurnEvents(turn, events, options)),
      new AbortController().signal,
      (message) => void warnings.push(message),
    )
    return { end: end.kind, turn, warnings }
  }

  it('gives what one parse per event gives, for any events, malformed ones included', async () => {
    await assertSeeded(
      'transport',
      fc.asyncProperty(fc.array(runs, { maxLength: 8 }), async (groups) => {
        const segments = groups.flat()
        const events = segments.map((data) => `data: ${data}\n\n`)
        // All in one network chunk (parsed at once where safe) against one chunk per event.
        expect(await fold([events.join('')])).toEqual(await fold(events))
      }),
      { numRuns: 1500 },
    )
  })
})
