/**
 * The engine's unit tests' scripted server and fixtures. The server: every request waits until the
 * test answers it, so a test walks a scenario one step at a time and asserts each state on the way
 * (the property suite runs the real reference backend instead); push is scripted the same way.
 * The fixtures: keys, the engine's settings, snapshots, openings. Browser behaviour (tabs and their
 * BroadcastChannel, storage with its quota, locks, IndexedDB, WebSocket) comes from `world/`,
 * whose stand-ins behave as browsers do; nothing here stands in for a browser.
 */
import { afterEach, beforeEach, expect, vi } from 'vitest'
import type { TurnEvent } from '../contract'
import type { EngineAction, EngineConfig } from '../engine/model'
import type {
  HistorySnapshot,
  Message,
  MessagePart,
  PushListener,
  PushMessage,
  PushSource,
} from '../index'
import { createPreviewChatClient, type PreviewChatClientOptions } from '../index'
import { uuidPattern } from '../wire/contract/requests'
import type { SessionState } from '../index'

export const key = { projectId: 'p1', agentId: 'a1', threadId: 't1' }

/** The client's default settings, for tests that drive the reducer and scheduler directly. */
export const engineConfig: EngineConfig = {
  delegationCharLimit: 4_000,
  retry: { baseMs: 500, maxMs: 15_000 },
  poll: { baseMs: 1_000, maxMs: 10_000 },
  minReadIntervalMs: 250,
  submitTimeoutMs: 30_000,
  stopWaitMs: 10_000,
  streamSilenceMs: 5_000,
}
/** The wall clock of every scripted session. */
export const now = Date.parse('2026-11-30T10:00:00.000Z')

/** A message's client id in tests that mint their own: a UUID made from the request number. */
export const messageIdOf = (request: number) =>
  `00000000-0000-4000-8000-${String(request).padStart(12, '0')}`

/** What a POST body's `messageId` is when the session minted it: any UUID. */
export const aMessageId = expect.stringMatching(uuidPattern)
export const base = `/rest/projects/p1/agents/v2/a1/chat`

interface Pending<T> {
  resolve(value: T): void
  reject(error: unknown): void
}

export interface RecordedRequest {
  method: string
  path: string
  body: unknown
}

/** A turn stream the test writes to. */
export class ScriptedStream {
  private controller!: ReadableStreamDefaultController<Uint8Array>
  /** The client cancelled its read of the body (on some servers, that cancels the turn). */
  cancelled = false
  readonly body = new ReadableStream<Uint8Array>({
    start: (controller) => void (this.controller = controller),
    cancel: () => void (this.cancelled = true),
  })
  private encoder = new TextEncoder()
  send(...events: TurnEvent[]) {
    for (const event of events) this.raw(`data: ${JSON.stringify(event)}\n\n`)
  }
  raw(text: string) {
    this.controller.enqueue(this.encoder.encode(text))
  }
  close() {
    this.controller.close()
  }
  fail() {
    this.controller.error(new TypeError('network error'))
  }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })

export function createScriptedServer() {
  const requests: RecordedRequest[] = []
  const reads: Pending<Response>[] = []
  const stops: Pending<Response>[] = []
  const posts: Pending<Response>[] = []
  const postSignals: (AbortSignal | null | undefined)[] = []

  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input), 'http://test')
    const method = init?.method ?? 'GET'
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined
    requests.push({ method, path: url.pathname, body })
    if (method === 'POST') postSignals.push(init?.signal)
    return new Promise<Response>((resolve, reject) => {
      const pending = { resolve, reject }
      const queue = method === 'GET' ? reads : method === 'DELETE' ? stops : posts
      queue.push(pending)
      init?.signal?.addEventListener('abort', () =>
        reject(init.signal?.reason ?? new Error('aborted')),
      )
    })
  })

  const take = <T>(queue: T[], what: string): T => {
    const next = queue.shift()
    if (!next)
      throw new Error(
        `no ${what} is waiting (requests so far: ${requests.map((r) => `${r.method} ${r.path}`).join(', ')})`,
      )
    return next
  }

  return {
    fetch,
    requests,
    count: (method: string, pathEnd = '') =>
      requests.filter((r) => r.method === method && r.path.endsWith(pathEnd)).length,
    pendingReads: () => reads.length,
    /** Answers the oldest waiting history read. */
    answerRead(
      snapshot:
        | HistorySnapshot
        | { status: number; body?: unknown; headers?: Record<string, string> }
        | 'network-error'
        | string
        | Response,
    ) {
      const read = take(reads, 'history read')
      if (snapshot instanceof Response) read.resolve(snapshot)
      else if (snapshot === 'network-error') read.reject(new TypeError('fetch failed'))
      else if (typeof snapshot === 'string') read.resolve(new Response(snapshot, { status: 200 }))
      else if ('status' in snapshot)
        read.resolve(
          json(
            snapshot.status,
            snapshot.body ?? { code: snapshot.status, message: 'failed' },
            snapshot.headers,
          ),
        )
      else read.resolve(json(200, { data: snapshot }))
    },
    /** Answers the oldest waiting POST with any response (a proxy's page, say). */
    answerPost(response: Response) {
      take(posts, 'POST').resolve(response)
    },
    /** The abort signal of every POST so far (a closed POST cancels the turn on some servers). */
    postSignals: () => postSignals,
    /** Answers the oldest waiting POST with a turn stream the test then writes to. */
    openStream(): ScriptedStream {
      const stream = new ScriptedStream()
      take(posts, 'POST').resolve(
        new Response(stream.body, {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
        }),
      )
      return stream
    },
    failPost(status: number | 'network-error') {
      const post = take(posts, 'POST')
      if (status === 'network-error') post.reject(new TypeError('fetch failed'))
      else post.resolve(json(status, { code: status, message: 'refused' }))
    },
    /** Answers the oldest waiting DELETE with any response (an HTML 404, say). */
    answerStopRaw(response: Response) {
      take(stops, 'DELETE').resolve(response)
    },
    answerStop(body: unknown, status = 200, headers: Record<string, string> = {}) {
      take(stops, 'DELETE').resolve(json(status, body, headers))
    },
  }
}

/** A push channel the test drives. */
export function createScriptedPush() {
  const listeners = new Set<PushListener>()
  let subscriptions = 0
  const source: PushSource = {
    subscribe(listener) {
      subscriptions++
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
  return {
    source,
    subscriptions: () => subscriptions,
    listeners: () => listeners.size,
    updated(executionId: string, threadId = key.threadId) {
      const message: PushMessage = {
        type: 'agentExecutionUpdated',
        data: { ...key, threadId, executionId },
      }
      listeners.forEach((listener) => listener.onMessage(message))
    },
    connection(connected: boolean) {
      listeners.forEach((listener) => listener.onConnectionChange?.(connected))
    },
  }
}

/** Lets pending promise callbacks and stream reads run (real macrotask; timers may be fake). */
export async function settle(rounds = 5) {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve))
}

export function setup(options: PreviewChatClientOptions & { isNew?: boolean } = {}) {
  const server = createScriptedServer()
  const push = createScriptedPush()
  const { isNew, ...clientOptions } = options
  const client = createPreviewChatClient({
    fetch: server.fetch,
    push: push.source,
    storage: null,
    relay: false,
    // Reads start as soon as asked; the spacing of reads has its own test.
    minReadIntervalMs: 0,
    resumeSignal: () => () => {},
    now: () => now,
    ...clientOptions,
  })
  const session = client.session({ ...key, ...(isNew !== undefined && { isNew }) })
  const states: SessionState[] = [session.getState()]
  const unsubscribe = session.subscribe((state) => states.push(state))
  /** The statuses the session went through, without repeats. */
  const statuses = () =>
    states.map((s) => s.status).filter((status, i, all) => i === 0 || all[i - 1] !== status)
  return { server, push, client, session, states, statuses, unsubscribe }
}

// --- the engine's openings ---------------------------------------------------------------------

/** The actions that open a session: listened to, its first read finding an empty thread. */
export const readEmptyThread = (): EngineAction[] => [
  { type: 'activated', at: 0, pushConnected: true },
  { type: 'read-started', at: 0, fetch: 1 },
  {
    type: 'snapshot',
    snapshot: empty,
    fresh: true,
    fromRead: true,
    at: 0,
    stampedAt: 0,
    random: 0,
  },
]

/**
 * Then this tab's own turn: request 1 (`Q`) sent and begun as `e1` at 0, its stream open, and a
 * read wanted behind it (held until the stream is silent for `streamSilenceMs`).
 */
export const streamingWithReadWanted = (): EngineAction[] => [
  ...readEmptyThread(),
  { type: 'submit-requested', request: 1, messageId: messageIdOf(1), text: 'Q', at: 0 },
  {
    type: 'turn-events',
    token: 1,
    events: [{ type: 'execution-started', executionId: 'e1', sessionId: key.threadId }],
    at: 0,
    stampedAt: 0,
  },
  { type: 'read-wanted', urgent: false },
]

// --- snapshot builders ---------------------------------------------------------------------------

export function userMessage(
  executionId: string,
  text: string,
  status: Message['executionStatus'] = 'success',
): Message {
  return {
    id: `${executionId}:user`,
    role: 'user',
    content: [{ type: 'text', text }],
    executionId,
    executionStatus: status,
    createdAt: '2026-11-30T10:00:00.000Z',
  }
}

export function assistantMessage(
  executionId: string,
  content: MessagePart[],
  status: Message['executionStatus'] = 'success',
): Message {
  return {
    id: `${executionId}:assistant`,
    role: 'assistant',
    content,
    executionId,
    executionStatus: status,
    createdAt: '2026-11-30T10:00:00.000Z',
  }
}

export function snapshot(
  messages: Message[],
  activeExecutionId: string | null = null,
  openSuspensions: HistorySnapshot['openSuspensions'] = [],
): HistorySnapshot {
  return { messages, openSuspensions, activeExecutionId }
}

export const empty = snapshot([])

/** A finished turn: the person's text and an answer. */
export function finishedTurn(executionId: string, question: string, answer: string): Message[] {
  return [
    userMessage(executionId, question),
    assistantMessage(executionId, [{ type: 'text', text: answer }]),
  ]
}

/**
 * The usual opening: the first read finds an empty thread, `text` is sent, and the turn's stream
 * opens with `execution-started` for `e1` (then `events`). Returns the submission and the stream.
 */
export async function startLiveTurn(
  t: ReturnType<typeof setup>,
  text = 'Q',
  ...events: TurnEvent[]
) {
  t.server.answerRead(empty)
  await settle()
  t.session.setDraft(text)
  const result = t.session.submit()
  await settle()
  const stream = t.server.openStream()
  stream.send({ type: 'execution-started', executionId: 'e1', sessionId: key.threadId }, ...events)
  await settle()
  return { result: await result, stream }
}

/** A record of a turn that runs: the question and, when given, the answer so far. */
export function runningTurn(
  options: { executionId?: string; question?: string; text?: string } = {},
) {
  const { executionId = 'e1', question = 'Q', text } = options
  return snapshot(
    [
      userMessage(executionId, question, 'running'),
      assistantMessage(executionId, text === undefined ? [] : [{ type: 'text', text }], 'running'),
    ],
    executionId,
  )
}

/** Fake `setTimeout` and `clearTimeout` in every test of the file (the clock stays real). */
export function useFakeTimersInEachTest() {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })
}

/**
 * A server of history reads with ETags: each thread's current body, version-tagged; an
 * `If-None-Match` naming the current version answers 304 with no body. `etags: false` for one
 * that sends none.
 */
export function conditionalServer(options: { etags?: boolean } = {}) {
  const bodies = new Map<string, { body: string; version: number }>()
  const sent: { path: string; ifNoneMatch: string | null }[] = []
  /** The status of every answer, in order. */
  const statuses: number[] = []
  let bogus304 = 0
  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const path = new URL(String(input), 'http://test').pathname
    const ifNoneMatch = new Headers(init?.headers).get('if-none-match')
    sent.push({ path, ifNoneMatch })
    const current = bodies.get(path)
    const answer = (response: Response) => (statuses.push(response.status), response)
    if (!current)
      return answer(Response.json({ code: 'not_found', message: 'no thread' }, { status: 404 }))
    const etag = `W/"${path.split('/').at(-2)}-v${current.version}"`
    if (bogus304 > 0) {
      bogus304--
      return answer(new Response(null, { status: 304 }))
    }
    if (options.etags !== false && ifNoneMatch === etag)
      return answer(new Response(null, { status: 304, headers: { etag } }))
    return answer(
      new Response(current.body, {
        headers: {
          'content-type': 'application/json',
          ...(options.etags !== false && { etag }),
        },
      }),
    )
  })
  return {
    fetch,
    sent,
    statuses,
    set(threadId: string, value: HistorySnapshot) {
      const path = `/rest/projects/p1/agents/v2/a1/chat/${threadId}/messages`
      const version = (bodies.get(path)?.version ?? 0) + 1
      bodies.set(path, { body: JSON.stringify({ data: value }), version })
    },
    /** The next `count` reads answer 304 whatever they asked (a broken proxy). */
    answer304(count: number) {
      bogus304 = count
    },
  }
}

/** A client of nothing but history reads over `fetch`: no push, relay or storage, reads at once. */
export function readsOnlyClient(
  fetch: typeof globalThis.fetch,
  options: PreviewChatClientOptions = {},
) {
  return createPreviewChatClient({
    fetch,
    push: false,
    relay: false,
    storage: null,
    minReadIntervalMs: 0,
    resumeSignal: () => () => {},
    onWarning: () => {},
    ...options,
  })
}

const textDelta = (delta: string): TurnEvent => ({ type: 'text-delta', id: 't', delta })

/**
 * This tab's own turn on an empty thread, after the session is mounted and listened to: the read,
 * the message posted, its turn begun with a delta, a batch of two deltas, its end.
 */
export const ownTurnActions: readonly EngineAction[] = [
  { type: 'read-started', at: 1, fetch: 1 },
  {
    type: 'snapshot',
    snapshot: empty,
    fresh: true,
    fromRead: true,
    at: 2,
    stampedAt: 2,
    random: 0,
  },
  { type: 'submit-requested', request: 1, text: 'Hi', messageId: 'm1', at: 10 },
  {
    type: 'turn-events',
    token: 1,
    events: [
      { type: 'execution-started', executionId: 'e1', sessionId: key.threadId },
      textDelta('He'),
    ],
    at: 11,
    stampedAt: 11,
  },
  {
    type: 'turn-events',
    token: 1,
    events: [textDelta('l'), textDelta('lo')],
    at: 12,
    stampedAt: 12,
  },
  { type: 'turn-events', token: 1, events: [{ type: 'done' }], at: 13, stampedAt: 13 },
]
