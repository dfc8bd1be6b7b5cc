/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run, as in tests */
import { createPreviewChatClient, type PushListener, type PushSource } from '@preview-chat/core'
import { QueryClient, QueryObserver } from '@tanstack/query-core'
import { sleep } from '../dom'
import { fmt, type Row, type Sizes } from '../row'
import { emptyHistory, json, key } from '../streams'

const NOTIFICATIONS = 100
const BURST_MS = 100

/** A history endpoint that answers after `latencyMs` and counts the reads. */
function history(latencyMs: number) {
  let reads = 0
  let lastStart = 0
  const fetch = async (_input: RequestInfo | URL, init?: RequestInit) => {
    reads++
    lastStart = performance.now()
    await sleep(latencyMs)
    init?.signal?.throwIfAborted()
    return json({ data: emptyHistory })
  }
  return {
    fetch,
    reads: () => reads,
    lastStart: () => lastStart,
    reset: () => void (reads = 0),
  }
}

interface Outcome {
  reads: number
  /** From the burst's last notification to the start of the last read (how fresh the end is). */
  lastReadAfterMs: number
}

/** Fires `NOTIFICATIONS` notifications spread over `BURST_MS` (a 1 ms timer loop). */
async function burst(notify: () => void): Promise<number> {
  const start = performance.now()
  let last = start
  let sent = 0
  while (sent < NOTIFICATIONS) {
    const due = Math.min(
      NOTIFICATIONS,
      Math.floor(((performance.now() - start) / BURST_MS) * NOTIFICATIONS) + 1,
    )
    while (sent < due) {
      notify()
      last = performance.now()
      sent++
    }
    await sleep(1)
  }
  return last
}

async function ours(latencyMs: number): Promise<Outcome> {
  const server = history(latencyMs)
  const listeners = new Set<PushListener>()
  const push: PushSource = {
    subscribe(listener) {
      listeners.add(listener)
      listener.onConnectionChange?.(true)
      return () => listeners.delete(listener)
    },
  }
  const client = createPreviewChatClient({
    fetch: server.fetch,
    push,
    relay: false,
    storage: null,
    resumeSignal: () => () => {},
  })
  const session = client.session(key)
  const unsubscribe = session.subscribe(() => {})
  await session.refresh()
  await sleep(300) // the burst comes mid-turn, not right after the page loaded
  server.reset()
  const last = await burst(() =>
    listeners.forEach((listener) =>
      listener.onMessage({
        type: 'agentExecutionUpdated',
        data: { ...key, executionId: 'exec-1' },
      }),
    ),
  )
  // Long enough for the trailing read: reads start at least 250 ms apart (minReadIntervalMs).
  await sleep(latencyMs * 3 + 400)
  unsubscribe()
  session.dispose()
  return { reads: server.reads(), lastReadAfterMs: server.lastStart() - last }
}

/**
 * What an app would wire around useChat (the AI SDK has no refetch on push): a TanStack Query
 * read invalidated on every notification, as is, or through a debounce with a leading and a
 * trailing edge (`waitMs` of quiet), the usual fix.
 */
async function invalidating(latencyMs: number, debounceMs: number | null): Promise<Outcome> {
  const server = history(latencyMs)
  const queryClient = new QueryClient()
  const observer = new QueryObserver(queryClient, {
    queryKey: ['history'],
    queryFn: ({ signal }) => server.fetch('/history', { signal }).then((r) => r.json()),
    retry: false,
  })
  const unsubscribe = observer.subscribe(() => {})
  await sleep(latencyMs + 20)
  server.reset()
  const invalidate = () => void queryClient.invalidateQueries({ queryKey: ['history'] })
  const notify = debounceMs === null ? invalidate : debounced(invalidate, debounceMs)
  const last = await burst(notify)
  await sleep(latencyMs * 3 + 400 + (debounceMs ?? 0))
  unsubscribe()
  queryClient.clear()
  return { reads: server.reads(), lastReadAfterMs: server.lastStart() - last }
}

/** Calls `run` at once, then once more after `waitMs` without a call, if calls came meanwhile. */
function debounced(run: () => void, waitMs: number): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null
  let pending = false
  return () => {
    if (timer === null) run()
    else pending = true
    if (timer !== null) clearTimeout(timer)
    timer = setTimeout(() => {
      timer = null
      if (pending) run()
      pending = false
    }, waitMs)
  }
}

const DEBOUNCE_MS = 250

export async function burstRow(_sizes: Sizes): Promise<Row> {
  const latencies = [5, 50]
  const results: {
    latency: number
    ours: Outcome
    perNotification: Outcome
    debounced: Outcome
  }[] = []
  for (const [i, latency] of latencies.entries()) {
    // Rotated: which one runs first changes with the latency.
    const runs = [
      ['ours', () => ours(latency)],
      ['perNotification', () => invalidating(latency, null)],
      ['debounced', () => invalidating(latency, DEBOUNCE_MS)],
    ] as const
    const order = [...runs.slice(i % 3), ...runs.slice(0, i % 3)]
    const outcome: Partial<Record<(typeof runs)[number][0], Outcome>> = {}
    for (const [name, run] of order) outcome[name] = await run()
    results.push({
      latency,
      ours: outcome.ours!,
      perNotification: outcome.perNotification!,
      debounced: outcome.debounced!,
    })
  }
  const worst = Math.max(...results.map((r) => r.ours.reads))
  const ok = worst <= 2
  const list = (pick: (r: (typeof results)[number]) => Outcome) =>
    results
      .map(
        (r) =>
          `${pick(r).reads} reads @${r.latency} ms (last read +${fmt.ms(Math.max(0, pick(r).lastReadAfterMs))})`,
      )
      .join(', ')
  return {
    id: 4,
    name: 'Notification burst',
    workload: `${NOTIFICATIONS} agentExecutionUpdated for the open thread within ${BURST_MS} ms; history reads answering in ${latencies.join(' or ')} ms`,
    method:
      'count of history GETs issued from the first notification until all reads settle, and when the last one started after the last notification; ours = a subscribed session on a scripted push source (reads ≥ 250 ms apart); peers = what an app wires around useChat (the AI SDK has no refetch on push): TanStack Query invalidateQueries on every notification, or debounced (leading + trailing edge, 250 ms)',
    ours: list((r) => r.ours),
    peer: `invalidate per notification: ${list((r) => r.perNotification)}; debounced: ${list((r) => r.debounced)}`,
    ratio: results
      .map(
        (r) =>
          `@${r.latency} ms: per-notification/ours ${fmt.x(r.perNotification.reads / Math.max(1, r.ours.reads))}, debounced/ours ${fmt.x(r.debounced.reads / Math.max(1, r.ours.reads))}`,
      )
      .join('; '),
    goal: '≤ 2 reads',
    met: ok,
    counts: [{ label: `row 4: at most ${worst} reads ≤ 2`, ok }],
  }
}
