/**
 * Row W4 (issue 30): a history read of a 2,000-message thread whose messages this client parsed
 * already, the reads a page makes after its first (the one after the push channel connects, each
 * push notification while nothing changed for the thread). Timed from the fetch to TanStack
 * Query's cache holding the result, as W1; the session's check of what the cache holds
 * (`checkSnapshot`) timed apart.
 */
import type { HistorySnapshot } from '@preview-chat/core'
// Not exported: the session's own check of what the query cache holds.
import { checkSnapshot } from '../../../packages/core/src/wire/contract/snapshot'
import { createTransport } from '@preview-chat/core/internal'
import { QueryClient } from '@tanstack/query-core'
import { contender, race, showTiming, spread, type Timing } from '../method'
import { fmt, type Row, type Sizes } from '../row'
import { key } from '../streams'
import { recordedMessages } from '../reload/seed'

const queryKey = ['history']
const BUDGET_MS = 5
const show = (t: Timing) => `${showTiming(t, fmt.ms)} (spread ${spread(t).toFixed(0)}%)`

const bodyOf = (messages: unknown[]) =>
  JSON.stringify({ data: { messages, openSuspensions: [], activeExecutionId: null } })

/** A server of one thread: its body now, with an ETag (a version number) unless `etag` is off. */
function serverOf(initial: string, etag: boolean) {
  let body = initial
  let version = 1
  const fetch = async (_input: RequestInfo | URL, init?: RequestInit) => {
    const tag = `W/"v${version}"`
    if (etag && new Headers(init?.headers).get('if-none-match') === tag)
      return new Response(null, { status: 304, headers: { etag: tag } })
    return new Response(body, {
      headers: { 'content-type': 'application/json', ...(etag && { etag: tag }) },
    })
  }
  return {
    fetch,
    change(next: string) {
      body = next
      version++
    },
  }
}

async function readInto(client: QueryClient, read: () => Promise<HistorySnapshot>) {
  return client.fetchQuery({ queryKey, queryFn: read, staleTime: 0, retry: false })
}

export async function rereadsRow({ smoke }: Sizes): Promise<Row> {
  const count = smoke ? 200 : 2_000
  const rounds = smoke ? 1 : 9
  const messages = recordedMessages(count, 'marker')
  const body = bodyOf(messages)
  const changed = bodyOf(
    messages.map((m, i) =>
      i === count - 1 ? { ...m, content: [{ type: 'text', text: 'changed' }] } : m,
    ),
  )
  const timers = { setTimeout, clearTimeout, now: () => performance.now() }
  /** A client that read the thread once; the next read is timed (`change` before it, if given). */
  const prepared = (etag: boolean, next?: string) => async () => {
    const server = serverOf(body, etag)
    const transport = createTransport({
      baseUrl: '/rest',
      fetch: server.fetch,
      requestTimeoutMs: 60_000,
      timers,
    })
    const client = new QueryClient()
    const first = await readInto(client, () => transport.readHistory(key))
    if (next) server.change(next)
    return { client, transport, first }
  }
  interface Input {
    client: QueryClient
    transport: ReturnType<typeof createTransport>
    first: HistorySnapshot | null
  }
  const run = ({ client, transport }: Input) => readInto(client, () => transport.readHistory(key))
  const same = (result: unknown) => {
    if ((result as HistorySnapshot).messages.length !== count) throw new Error('not the thread')
  }
  const t = await race(
    {
      notModified: contender({ prepare: prepared(true), run, check: same }),
      sameBody: contender({ prepare: prepared(false), run, check: same }),
      lastChanged: contender({ prepare: prepared(true, changed), run, check: same }),
      firstRead: contender({
        prepare: async () => ({
          client: new QueryClient(),
          transport: createTransport({
            baseUrl: '/rest',
            fetch: serverOf(body, true).fetch,
            requestTimeoutMs: 60_000,
            timers,
          }),
          first: null as HistorySnapshot | null,
        }),
        run,
        check: same,
      }),
      floor: contender({
        prepare: async () => new Response(body),
        run: async (response: Response) =>
          JSON.parse(await response.text()) as { data: HistorySnapshot },
        check: (result) => same((result as { data: HistorySnapshot }).data),
      }),
      checkSnapshot: contender({
        prepare: prepared(true),
        run: async ({ first }: Input) => {
          const checked = checkSnapshot(first)
          if (!checked.success) throw checked.error
          return checked.value
        },
        check: same,
      }),
    },
    { rounds, warmup: !smoke },
  )
  const heldMs = Math.max(t.notModified.median, t.sameBody.median, t.checkSnapshot.median)
  return {
    id: 'W4',
    name: 'Win 4: reads of what this client holds',
    workload: `a read of a ${fmt.int(count)}-message thread (${fmt.kb(body.length)} of JSON) that this client read already: answered 304 to its If-None-Match, answered 200 with the same body (a server without ETags), answered 200 with the last message changed; the first read and the floor (JSON.parse) beside them`,
    method: `${rounds} rounds, rotated, GC before each, one warm-up round for all; min / median; the body prebuilt, answered as a Response; timed from the fetch to TanStack Query's cache holding the result (structural sharing included), checked; checkSnapshot = the session's check of what the cache holds, on the snapshot the read gave`,
    ours: `304: ${show(t.notModified)}; same body: ${show(t.sameBody)}; checkSnapshot: ${show(t.checkSnapshot)}; last message changed: ${show(t.lastChanged)}`,
    peer: `first read (every message validated): ${show(t.firstRead)}; floor (JSON.parse only): ${show(t.floor)}`,
    ratio: `first read / 304 ${fmt.x(t.firstRead.median / t.notModified.median)}, first read / same body ${fmt.x(t.firstRead.median / t.sameBody.median)} (medians); last changed / floor ${fmt.x(t.lastChanged.median / t.floor.median)}`,
    goal: `≤ ${BUDGET_MS} ms at 2,000 messages for a snapshot whose messages this client parsed (304, same body, checkSnapshot), by median`,
    met: smoke ? null : heldMs <= BUDGET_MS,
  }
}
