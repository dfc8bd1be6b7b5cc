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
  const fetch = async (_input: RequestInfo | URL, init?: RequestInit) => {
    reads++
    await sleep(latencyMs)
    init?.signal?.throwIfAborted()
    return json({ data: emptyHistory })
  }
  return { fetch, reads: () => reads, reset: () => void (reads = 0) }
}

/** Fires `NOTIFICATIONS` notifications spread over `BURST_MS` (a 1 ms timer loop). */
async function burst(notify: () => void) {
  const start = performance.now()
  let sent = 0
  while (sent < NOTIFICATIONS) {
    const due = Math.min(
      NOTIFICATIONS,
      Math.floor(((performance.now() - start) / BURST_MS) * NOTIFICATIONS) + 1,
    )
    while (sent < due) {
      notify()
      sent++
    }
    await sleep(1)
  }
}

async function ours(latencyMs: number): Promise<number> {
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
  await burst(() =>
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
  return server.reads()
}

/** What an app would wire around useChat: invalidate a TanStack Query on every notification. */
async function invalidatePerNotification(latencyMs: number): Promise<number> {
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
  await burst(() => void queryClient.invalidateQueries({ queryKey: ['history'] }))
  // Long enough for the trailing read: reads start at least 250 ms apart (minReadIntervalMs).
  await sleep(latencyMs * 3 + 400)
  unsubscribe()
  queryClient.clear()
  return server.reads()
}

export async function burstRow(_sizes: Sizes): Promise<Row> {
  const latencies = [5, 50]
  const results: { latency: number; ours: number; peer: number }[] = []
  for (const latency of latencies)
    results.push({
      latency,
      ours: await ours(latency),
      peer: await invalidatePerNotification(latency),
    })
  const worst = Math.max(...results.map((r) => r.ours))
  const ok = worst <= 2
  const list = (pick: (r: (typeof results)[number]) => number) =>
    results.map((r) => `${pick(r)} reads @${r.latency} ms`).join(', ')
  return {
    id: 4,
    name: 'Notification burst',
    workload: `${NOTIFICATIONS} agentExecutionUpdated for the open thread within ${BURST_MS} ms; history reads answering in ${latencies.join(' or ')} ms`,
    method:
      'count of history GETs issued from the first notification until all reads settle; ours = a subscribed session on a scripted push source; peer = an app-wired TanStack Query invalidateQueries per notification (the AI SDK has no refetch on push)',
    ours: list((r) => r.ours),
    peer: list((r) => r.peer),
    ratio: results
      .map((r) => `${fmt.x(r.peer / Math.max(1, r.ours))} fewer @${r.latency} ms`)
      .join(', '),
    goal: '≤ 2 reads',
    met: ok,
    counts: [{ label: `row 4: at most ${worst} reads ≤ 2`, ok }],
  }
}
