/**
 * The recovery guarantees, over random scripts, against the real reference backend in-process:
 * the live stream is cut at every event position, reads are delayed and failed at random, and
 * each run must end with the server's record on screen, one POST, a transcript that never went
 * backwards, the draft never lost, and nothing left running after dispose().
 */
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
// A relative import keeps the workspace free of a core ⇄ server dependency cycle (test-only).
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import { parseHistorySnapshot } from '../contract'
import { markTruncated } from '../internal'
import {
  createPreviewChatClient,
  type HistorySnapshot,
  type Message,
  type PushSource,
  type SessionState,
  type Timers,
} from '../index'

const limit = 40 // a small delegation budget, so that truncation happens often
const key = { projectId: 'p', agentId: 'a' }

interface Faults {
  /** Cut the turn stream after this many events (`undefined`: never). */
  cutAfter: number | undefined
  /** Cut by closing cleanly (true) or by a network error (false). */
  cleanCut: boolean
  /** Per history read, in order: fail it (and how), and how long it takes. */
  reads: { fail: 'no' | '500' | 'network'; delayMs: number }[]
}

/** Passes `n` SSE events through, then closes or errors; the server's turn goes on regardless. */
function cutStream(
  body: ReadableStream<Uint8Array>,
  n: number,
  clean: boolean,
): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  let buffer = ''
  let passed = 0
  return new ReadableStream({
    async pull(controller) {
      for (;;) {
        const blocks = buffer.split('\n\n')
        buffer = blocks.pop() ?? ''
        for (const block of blocks) {
          if (block.startsWith('data:')) {
            if (passed === n) {
              void reader.cancel()
              if (clean) controller.close()
              else controller.error(new TypeError('network connection lost'))
              return
            }
            passed++
          }
          controller.enqueue(encoder.encode(`${block}\n\n`))
        }
        if (blocks.length > 0) return
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          return
        }
        buffer += decoder.decode(value, { stream: true })
      }
    },
    cancel: () => reader.cancel(),
  })
}

function faultyFetch(backend: PreviewChatBackend, faults: Faults) {
  let read = 0
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(new URL(String(input), 'http://localhost'), init)
    const isRead = request.method === 'GET' && request.url.endsWith('/messages')
    if (isRead) {
      // The listed faults hit the first reads; the network heals after them.
      const fault = faults.reads[read++] ?? { fail: 'no', delayMs: 0 }
      // A slow network, which (like a real fetch) gives up at once when the request is aborted.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, fault.delayMs)
        init?.signal?.addEventListener('abort', () => {
          clearTimeout(timer)
          reject(init.signal?.reason)
        })
      })
      if (fault.fail === 'network') throw new TypeError('fetch failed')
      if (fault.fail === '500')
        return Response.json({ code: 500, message: 'injected' }, { status: 500 })
    }
    const response = await backend.fetch(request)
    if (request.method === 'POST' && faults.cutAfter !== undefined && response.body) {
      return new Response(cutStream(response.body, faults.cutAfter, faults.cleanCut), response)
    }
    return response
  }
}

/** Timers that know which of their handles are still pending. */
function countingTimers(): Timers & { pending(): number } {
  const live = new Set<unknown>()
  return {
    setTimeout(callback, ms) {
      const handle = setTimeout(() => {
        live.delete(handle)
        callback()
      }, ms)
      live.add(handle)
      return handle
    },
    clearTimeout(handle) {
      live.delete(handle)
      clearTimeout(handle as ReturnType<typeof setTimeout>)
    },
    pending: () => live.size,
    now: () => performance.now(),
  }
}

function pushFrom(backend: PreviewChatBackend, user: string): PushSource & { open(): number } {
  let open = 0
  return {
    open: () => open,
    subscribe(listener) {
      open++
      const unsubscribe = backend.subscribePush(user, (message) => listener.onMessage(message))
      queueMicrotask(() => listener.onConnectionChange?.(true))
      return () => {
        open--
        unsubscribe()
      }
    },
  }
}

const progress = (message: Message) =>
  message.content.reduce((sum, part) => {
    if (part.type === 'text' || part.type === 'reasoning') return sum + part.text.length
    if (part.type === 'tool-call' && part.childTrace) return sum + part.childTrace.text.length
    return sum
  }, 0)

async function until(
  condition: () => boolean,
  what: string,
  ms = 2_000,
  detail: () => unknown = () => '',
) {
  const started = Date.now()
  while (!condition()) {
    if (Date.now() - started > ms)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(detail(), null, 1)}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

async function run(message: string, faults: Faults) {
  const backend = createPreviewChatBackend({
    deltaMs: 0,
    snapshotMs: 3,
    delegationCharLimit: limit,
  })
  const push = pushFrom(backend, 'alice')
  const timers = countingTimers()
  const client = createPreviewChatClient({
    fetch: faultyFetch(backend, faults),
    headers: { authorization: 'Bearer alice' },
    push,
    storage: null,
    timers,
    lingerMs: 0,
    resumeSignal: () => () => {},
    delegationCharLimit: limit,
    retry: { baseMs: 2, maxMs: 10 },
    minReadIntervalMs: 5,
    poll: { baseMs: 2, maxMs: 10 },
  })
  const threadId = crypto.randomUUID()
  const session = client.session({ ...key, threadId })
  const seen: SessionState[] = []
  const unsubscribe = session.subscribe((state) => seen.push(state))
  await until(() => session.getState().status === 'idle', 'the first read')

  session.setDraft(message)
  const result = await session.submit()
  const accepted = result.outcome === 'accepted'

  // Converged: the server finished, and this tab shows its record with nothing pending.
  await until(() => backend.inspect.running().length === 0, 'the server to finish the turn')
  // The record as a client receives it: through the wire format and the contract's parser.
  const recorded = (): HistorySnapshot => {
    const parsed = parseHistorySnapshot(
      JSON.parse(JSON.stringify(backend.inspect.history(threadId))),
    )
    if (!parsed.success) throw parsed.error
    return markTruncated(parsed.value, limit)
  }
  await until(
    () => {
      const state = session.getState()
      return (
        state.status === 'idle' &&
        state.readError === null &&
        isDeepStrictEqual(state.messages, recorded().messages)
      )
    },
    'the tab to show the record',
    2_000,
    () => ({ state: session.getState(), recorded: recorded() }),
  )

  const final = session.getState()
  unsubscribe()
  session.dispose()
  await new Promise((resolve) => setTimeout(resolve, 5))
  const leftovers = {
    timers: timers.pending(),
    pushConnections: push.open(),
    liveStreams: backend.inspect.running().length,
  }
  await backend.close()
  return { accepted, result, final, seen, recorded: recorded(), backend, leftovers }
}

function assertInvariants(outcome: Awaited<ReturnType<typeof run>>, message: string) {
  const { accepted, final, seen, recorded, backend, leftovers } = outcome
  // The final transcript is the server's record.
  expect(final.messages).toEqual(recorded.messages)
  expect(final.activeExecutionId).toBeNull()
  // Exactly one POST per accepted submission; never sent again.
  expect(backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(1)
  // The draft is never lost: cleared only by acceptance. (A stream cut before execution-started
  // leaves the client unsure, so it keeps the draft even though the server took the turn.)
  for (const state of seen) expect(state.draft === '' || state.draft === message).toBe(true)
  expect(final.draft).toBe(accepted ? '' : message)
  // The visible transcript never goes backwards: no message vanishes, none shrinks.
  const best = new Map<string, number>()
  for (const state of seen) {
    const ids = new Set(state.messages.map((m) => m.id))
    for (const id of best.keys()) expect(ids.has(id), `message ${id} vanished`).toBe(true)
    for (const m of state.messages) {
      expect(progress(m), `message ${m.id} shrank`).toBeGreaterThanOrEqual(best.get(m.id) ?? 0)
      best.set(m.id, progress(m))
    }
  }
  // Nothing left behind by dispose().
  expect(leftovers).toEqual({ timers: 0, pushConnections: 0, liveStreams: 0 })
}

const scripts = ['hello there, general', '/long 6', '/delegate 90', '/fail', '/suspend']

describe('recovery under faults (property suite, real backend in-process)', () => {
  it('a cut at every event position of a turn ends with the record on screen and one POST', async () => {
    // '/long 6' streams: execution-started, step/text start, 6 deltas, text-end, finish-step, done.
    for (let cutAfter = 0; cutAfter <= 12; cutAfter++) {
      for (const cleanCut of [true, false]) {
        const outcome = await run('/long 6', { cutAfter, cleanCut, reads: [] })
        assertInvariants(outcome, '/long 6')
      }
    }
  }, 60_000)

  it('random scripts, cuts and read faults converge to the record', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...scripts),
        fc.option(fc.nat({ max: 30 }), { nil: undefined }),
        fc.boolean(),
        fc.array(
          fc.record({
            fail: fc.constantFrom('no', 'no', '500', 'network'),
            delayMs: fc.nat({ max: 8 }),
          }),
          { maxLength: 6 },
        ),
        async (message, cutAfter, cleanCut, reads) => {
          const outcome = await run(message, { cutAfter, cleanCut, reads })
          assertInvariants(outcome, message)
        },
      ),
      { numRuns: 100, endOnFailure: true },
    )
  }, 60_000)
})
