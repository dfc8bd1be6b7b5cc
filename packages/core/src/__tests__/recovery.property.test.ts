/**
 * The recovery guarantees, over random scripts, against the real reference backend in-process:
 * the live stream is cut at every event position, reads are delayed, failed and rate-limited at
 * random, Stop is pressed at any point, a second message is sent the moment the gate opens, and
 * the push channel flaps. After every state, not only at the end: the transcript never shrinks,
 * never shows what the record later contradicts, the draft is never lost; each run ends with the
 * server's record on screen, one POST per turn, and nothing left running after dispose().
 */
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it, vi } from 'vitest'
import { assertSeeded } from './seeded'
// Relative imports keep the workspace free of a core ⇄ server ⇄ msw cycle (test-only).
import { cutAfterEvents } from '../../../msw/src/streamCut'
import {
  createPreviewChatBackend,
  scriptedAgent,
  type PreviewChatAgent,
  type PreviewChatBackend,
} from '../../../server/src/index'
import { parseHistorySnapshot } from '../contract'
import {
  createPreviewChatClient,
  type HistorySnapshot,
  type Message,
  type PushSource,
  type SessionState,
  type Timers,
} from '../index'
import { markTruncated } from '../internal'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

const limit = 40 // a small delegation budget, so that truncation happens often
const key = { projectId: 'p', agentId: 'a' }

interface Faults {
  /** Cut the first turn stream after this many events (`undefined`: never). */
  cutAfter: number | undefined
  /** Cut by closing cleanly (true) or by a network error (false). */
  cleanCut: boolean
  /** Per history read, in order: fail it (and how), and how long it takes. */
  reads: { fail: 'no' | '500' | '429' | 'network'; delayMs: number }[]
  /** Press Stop once this many states were seen while a turn runs (`undefined`: never). */
  stopAfter?: number | undefined
  /** A second message, sent the moment the gate opens after the first turn. */
  second?: string | undefined
  /** The push channel drops and comes back every few milliseconds. */
  flap?: boolean
}

/** The scripted agent, plus `/tool-error`: a tool call that fails, then an answer. */
const agent: PreviewChatAgent = async (input, context) => {
  if (input.kind !== 'message' || input.message !== '/tool-error')
    return scriptedAgent(input, context)
  const toolCallId = context.id('call')
  context.emit({ type: 'tool-call', toolCallId, toolName: 'fetch_page', input: { url: 'x' } })
  await context.pause()
  context.emit({
    type: 'tool-result',
    toolCallId,
    toolName: 'fetch_page',
    output: 'HTTP 502',
    isError: true,
  })
  const id = context.id('text')
  context.emit({ type: 'text-delta', id, delta: 'The page failed to load.' })
  await context.pause()
  return { kind: 'done' }
}

/** `postedIds`: each chat POST's `messageId`, in order. */
function faultyFetch(backend: PreviewChatBackend, faults: Faults, postedIds: string[]) {
  let read = 0
  let posts = 0
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(new URL(String(input), 'http://localhost'), init)
    if (request.method === 'POST' && request.url.endsWith('/chat'))
      postedIds.push((JSON.parse(String(init?.body)) as { messageId: string }).messageId)
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
      if (fault.fail === '429')
        return Response.json(
          { code: 429, message: 'slow down' },
          { status: 429, headers: { 'retry-after': '1' } },
        )
    }
    const response = await backend.fetch(request)
    const cut = request.method === 'POST' && posts++ === 0 && faults.cutAfter !== undefined
    if (cut && response.body) {
      const mode = faults.cleanCut ? 'close' : 'error'
      const body = cutAfterEvents(
        response.body,
        { afterEvents: faults.cutAfter ?? 0, mode },
        () => {},
      )
      return new Response(body, response)
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

/** The user's push channel; a flapping one loses what is sent while it is down. */
function pushFrom(
  backend: PreviewChatBackend,
  user: string,
  flap: boolean,
): PushSource & { open(): number } {
  let open = 0
  return {
    open: () => open,
    subscribe(listener) {
      open++
      let up = true
      let flapper: ReturnType<typeof setTimeout> | undefined
      const toggle = () => {
        up = !up
        listener.onConnectionChange?.(up)
        flapper = setTimeout(toggle, 2 + Math.floor(Math.random() * 6))
      }
      const unsubscribe = backend.subscribePush(user, (message) => {
        if (up) listener.onMessage(message)
      })
      queueMicrotask(() => listener.onConnectionChange?.(true))
      if (flap) flapper = setTimeout(toggle, 3)
      return () => {
        open--
        clearTimeout(flapper)
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
  ms = 5_000,
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
    dev: true,
    agent,
    deltaMs: 0,
    snapshotMs: 3,
    delegationCharLimit: limit,
  })
  const push = pushFrom(backend, 'alice', faults.flap ?? false)
  const timers = countingTimers()
  const postedIds: string[] = []
  const client = createPreviewChatClient({
    fetch: faultyFetch(backend, faults, postedIds),
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
    streamSilenceMs: 50,
  })
  const threadId = crypto.randomUUID()
  const session = client.session({ ...key, threadId })
  const seen: SessionState[] = []
  let submits = 0
  let secondSent = false
  let firstAccepted = false
  let stopped = false
  /** The last message submitted, and whether the server took it: the draft must say so. */
  let last = { text: message, accepted: false }
  let secondDone: Promise<void> = Promise.resolve()
  const unsubscribe = session.subscribe((state) => {
    seen.push(state)
    if (
      faults.stopAfter !== undefined &&
      !stopped &&
      state.isRunning &&
      seen.length >= faults.stopAfter
    ) {
      stopped = true
      void session.stop()
    }
    // The moment the gate opens after the first turn, the second message goes.
    if (faults.second && firstAccepted && !secondSent && state.canSubmit) {
      secondSent = true
      const text = faults.second
      secondDone = session.submit().then((result) => {
        if (result.outcome !== 'busy') submits++
        last = { text, accepted: result.outcome === 'accepted' }
      })
    }
  })
  await until(() => session.getState().status === 'idle', 'the first read')

  session.setDraft(message)
  const result = await session.submit()
  submits++
  const accepted = result.outcome === 'accepted'
  last = { text: message, accepted }
  // The draft stays editable while the turn runs: the next message is typed at once.
  if (accepted && faults.second) {
    firstAccepted = true
    session.setDraft(faults.second)
  }

  // The record as a client receives it: through the wire format and the contract's parser.
  const recorded = (): HistorySnapshot => {
    const parsed = parseHistorySnapshot(
      JSON.parse(JSON.stringify(backend.inspect.history(threadId))),
    )
    if (!parsed.success) throw parsed.error
    return markTruncated(parsed.value, limit)
  }
  // Converged: the server finished every turn, and this tab shows its record with nothing pending.
  await until(
    () => {
      const state = session.getState()
      return (
        backend.inspect.running().length === 0 &&
        (!firstAccepted || secondSent) &&
        state.status === 'idle' &&
        state.readError === null &&
        isDeepStrictEqual(state.messages, recorded().messages)
      )
    },
    'the tab to show the record',
    5_000,
    () => ({ state: session.getState(), recorded: recorded() }),
  )

  await secondDone
  const final = session.getState()
  unsubscribe()
  session.dispose()
  // What dispose() leaves must wind down at once (a linger of 0 ms; a loaded machine is slow).
  await until(() => timers.pending() === 0 && push.open() === 0, 'dispose to wind down', 500).catch(
    () => {},
  )
  const leftovers = {
    timers: timers.pending(),
    pushConnections: push.open(),
    liveStreams: backend.inspect.running().length,
  }
  await backend.close()
  const expectedDraft = last.accepted ? '' : last.text
  return {
    accepted,
    submits,
    postedIds,
    cut: faults.cutAfter !== undefined,
    final,
    seen,
    recorded: recorded(),
    backend,
    leftovers,
    expectedDraft,
  }
}

function assertInvariants(outcome: Awaited<ReturnType<typeof run>>, drafts: string[]) {
  const { final, seen, recorded, backend, leftovers, submits, postedIds, cut } = outcome
  // The final transcript is the server's record.
  expect(final.messages).toEqual(recorded.messages)
  expect(final.activeExecutionId).toBeNull()
  // One POST per submission that was sent, each its own messageId; the one whose answer was cut
  // before any event may be sent once more with the same id (the reference server dedupes
  // [R-POST-RETRY-DEDUPE]), and nothing else ever is.
  const ids = new Set(postedIds)
  expect(ids.size).toBe(submits)
  const again = postedIds.length - ids.size
  expect(again).toBeLessThanOrEqual(cut ? 1 : 0)
  expect(backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(postedIds.length)
  // No message is in the record twice, whatever was sent again: at most one turn per message sent.
  expect(recorded.messages.filter((m) => m.role === 'user').length).toBeLessThanOrEqual(submits)
  // The draft is never lost: it holds a message until that message is accepted.
  for (const state of seen) expect(['', ...drafts]).toContain(state.draft)
  // Cleared by the acceptance of its message, kept when the server did not take it.
  expect(final.draft).toBe(outcome.expectedDraft)
  const finalById = new Map(recorded.messages.map((m) => [m.id, m]))
  const best = new Map<string, number>()
  for (const state of seen) {
    // Never goes backwards: no message vanishes, none shrinks.
    const ids = new Set(state.messages.map((m) => m.id))
    for (const id of best.keys()) expect(ids.has(id), `message ${id} vanished`).toBe(true)
    for (const m of state.messages) {
      expect(progress(m), `message ${m.id} shrank`).toBeGreaterThanOrEqual(best.get(m.id) ?? 0)
      best.set(m.id, progress(m))
      // Never shows what the record later contradicts: no phantom message, no more text than
      // the record keeps, no ending other than the recorded one.
      const recordedMessage = finalById.get(m.id)
      expect(recordedMessage, `message ${m.id} is not in the record`).toBeDefined()
      expect(progress(m), `message ${m.id} showed more than the record`).toBeLessThanOrEqual(
        progress(recordedMessage ?? m),
      )
      if (m.executionStatus !== 'running')
        expect(m.executionStatus, `message ${m.id} ended otherwise`).toBe(
          recordedMessage?.executionStatus,
        )
    }
  }
  // Nothing left behind by dispose().
  expect(leftovers).toEqual({ timers: 0, pushConnections: 0, liveStreams: 0 })
}

const scripts = [
  'hello there, general',
  '/long 6',
  '/delegate 90',
  '/fail',
  '/suspend',
  '/tool-error',
]

describe('recovery under faults (property suite, real backend in-process) [R-POST-ONCE]', () => {
  it('a cut at every event position of a turn ends with the record on screen and one POST [R-RECOVER-READ R-RECOVER-CUT]', async () => {
    // '/long 6' streams: execution-started, step/text start, 6 deltas, text-end, finish-step, done.
    for (let cutAfter = 0; cutAfter <= 12; cutAfter++) {
      for (const cleanCut of [true, false]) {
        const outcome = await run('/long 6', { cutAfter, cleanCut, reads: [] })
        assertInvariants(outcome, ['/long 6'])
      }
    }
  }, 60_000)

  it('Stop pressed at every point of a turn ends with the recorded ending, never contradicted [R-STOP-RECORD R-STOP-DONE-WAITS]', async () => {
    for (let stopAfter = 1; stopAfter <= 14; stopAfter++) {
      const outcome = await run('/long 6', {
        cutAfter: undefined,
        cleanCut: true,
        reads: [],
        stopAfter,
      })
      assertInvariants(outcome, ['/long 6'])
    }
  }, 60_000)

  it('random scripts, cuts, Stops, back-to-back turns, a flapping push and read faults converge [R-RECOVER-NEVER-VANISHES R-READ-NEVER-SHRINKS R-READ-KEEPS R-SERVER-STATUSES]', async () => {
    await assertSeeded(
      'recovery.property',
      fc.asyncProperty(
        fc.constantFrom(...scripts),
        fc.record({
          cutAfter: fc.option(fc.nat({ max: 30 }), { nil: undefined }),
          cleanCut: fc.boolean(),
          reads: fc.array(
            fc.record({
              fail: fc.constantFrom('no', 'no', '500', '429', 'network'),
              delayMs: fc.nat({ max: 8 }),
            }),
            { maxLength: 6 },
          ),
          stopAfter: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined, freq: 3 }),
          second: fc.option(fc.constantFrom(...scripts), { nil: undefined }),
          flap: fc.boolean(),
        }),
        async (message, faults) => {
          const outcome = await run(message, faults)
          assertInvariants(outcome, faults.second ? [message, faults.second] : [message])
        },
      ),
      { numRuns: 100, endOnFailure: true },
    )
  }, 120_000)
})
