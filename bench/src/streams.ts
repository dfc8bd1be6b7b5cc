/**
 * The wire workloads every row shares: one answer as our SSE turn stream and as the AI SDK's
 * UI message stream, carrying the same text in the same deltas.
 */

export const key = { projectId: 'bench', agentId: 'agent', threadId: 'thread' } as const

const encoder = new TextEncoder()
const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`

/** The delta `i` of an answer: `size` characters of ASCII text. */
export function delta(i: number, size: number): string {
  const word = `w${i % 1000} `
  return word.repeat(Math.ceil(size / word.length)).slice(0, size)
}

/** Our contract: `execution-started`, one text stream, `done`. */
export const ours = {
  head: () => [
    sse({ type: 'execution-started', executionId: 'exec-1', sessionId: key.threadId }),
    sse({ type: 'text-start', id: 'text-1' }),
  ],
  delta: (text: string) => sse({ type: 'text-delta', id: 'text-1', delta: text }),
  tail: () => [sse({ type: 'text-end', id: 'text-1' }), sse({ type: 'done' })],
  headers: { 'content-type': 'text/event-stream' },
}

/** The AI SDK's UI message stream protocol (v1) for the same answer. */
export const aiSdk = {
  head: () => [
    sse({ type: 'start', messageId: 'msg-1' }),
    sse({ type: 'start-step' }),
    sse({ type: 'text-start', id: 'text-1' }),
  ],
  delta: (text: string) => sse({ type: 'text-delta', id: 'text-1', delta: text }),
  tail: () => [
    sse({ type: 'text-end', id: 'text-1' }),
    sse({ type: 'finish-step' }),
    sse({ type: 'finish' }),
    'data: [DONE]\n\n',
  ],
  headers: { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' },
}

/**
 * LangGraph's stream (`streamMode: "messages-tuple"`, as `useStream` with a custom transport reads
 * it): a `metadata` event, then one `messages` event per token, each a serialised
 * `AIMessageChunk` with its metadata; the body closes at the end of the run.
 */
export const langGraph = {
  head: () => [
    `event: metadata\ndata: ${JSON.stringify({ run_id: 'run-1', thread_id: key.threadId })}\n\n`,
  ],
  delta: (text: string) =>
    `event: messages\ndata: ${JSON.stringify([
      { type: 'AIMessageChunk', content: text, id: 'msg-1' },
      { langgraph_node: 'agent', run_id: 'run-1' },
    ])}\n\n`,
  tail: (): string[] => [],
  headers: { 'content-type': 'text/event-stream' },
}

export type Protocol = typeof ours

/**
 * A whole answer as network chunks of ~`chunkBytes` bytes, built ahead (before any timer starts):
 * the same bytes `answerStream` generates as read.
 */
export function answerChunks(
  protocol: Protocol,
  deltas: number,
  deltaChars: number,
  chunkBytes = 16 * 1024,
): Uint8Array[] {
  const chunks: Uint8Array[] = []
  let text = protocol.head().join('')
  for (let sent = 0; sent < deltas;) {
    text += protocol.delta(delta(sent++, deltaChars))
    if (text.length >= chunkBytes) {
      chunks.push(encoder.encode(text))
      text = ''
    }
  }
  chunks.push(encoder.encode(text + protocol.tail().join('')))
  return chunks
}

/** A body that hands out prebuilt chunks, one per read. */
export function streamOf(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[next++]
        if (chunk) controller.enqueue(chunk)
        if (next >= chunks.length) controller.close()
      },
    },
    { highWaterMark: 0 },
  )
}

/**
 * A whole answer as network chunks of ~`chunkBytes` bytes, generated lazily as the reader pulls,
 * so the bytes on the wire are never all in memory at once (row 5 measures the heap).
 */
export function answerStream(
  protocol: Protocol,
  deltas: number,
  deltaChars: number,
  options: { chunkBytes?: number; onPull?: (deltasSent: number) => void } = {},
): ReadableStream<Uint8Array> {
  const chunkBytes = options.chunkBytes ?? 16 * 1024
  let sent = -1 // -1: the head is still to send
  let tailSent = false
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        options.onPull?.(Math.max(0, sent))
        let text = ''
        if (sent === -1) {
          text = protocol.head().join('')
          sent = 0
        }
        while (sent < deltas && text.length < chunkBytes)
          text += protocol.delta(delta(sent++, deltaChars))
        if (sent === deltas && !tailSent && text.length < chunkBytes) {
          text += protocol.tail().join('')
          tailSent = true
        }
        if (text) controller.enqueue(encoder.encode(text))
        if (tailSent) controller.close()
      },
    },
    { highWaterMark: 0 },
  )
}

/**
 * An answer paced in real time: the head at once, `deltas` deltas spread evenly over `durationMs`
 * (each its own network chunk, released by a 1 ms timer loop), then the tail `tailDelayMs` after
 * the last delta, so that the last delta's text has to reach the screen on its own (not carried by
 * the end of the turn). `lastDeltaAt` tells when the last delta was enqueued.
 */
export function pacedStream(
  protocol: Protocol,
  deltas: number,
  durationMs: number,
  tailDelayMs: number,
  timing: { firstDeltaAt?: number; lastDeltaAt?: number },
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(protocol.head().join('')))
      const start = performance.now()
      timing.firstDeltaAt = start
      let sent = 0
      const tick = () => {
        const due = Math.min(
          deltas,
          Math.floor(((performance.now() - start) / durationMs) * deltas) + 1,
        )
        while (sent < due) controller.enqueue(encoder.encode(protocol.delta(delta(sent++, 4))))
        if (sent < deltas) {
          setTimeout(tick, 1)
          return
        }
        timing.lastDeltaAt = performance.now()
        setTimeout(() => {
          controller.enqueue(encoder.encode(protocol.tail().join('')))
          controller.close()
        }, tailDelayMs)
      }
      setTimeout(tick, 1)
    },
  })
}

/** The text an answer of `deltas` deltas of `deltaChars` characters adds up to. */
export function answerText(deltas: number, deltaChars: number): string {
  let text = ''
  for (let i = 0; i < deltas; i++) text += delta(i, deltaChars)
  return text
}

export const json = (body: unknown) =>
  new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } })

export const emptyHistory = { messages: [], openSuspensions: [], activeExecutionId: null }

export { median } from './method'
