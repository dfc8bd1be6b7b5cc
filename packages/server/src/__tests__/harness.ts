import { createParser } from 'eventsource-parser'
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect } from 'node:net'
import {
  parseHistorySnapshot,
  parsePushMessage,
  parseTurnEvent,
  type HistorySnapshot,
  type PushMessage,
  type TurnEvent,
} from '@preview-chat/core/contract'
import fc from 'fast-check'
import { afterAll, beforeAll, expect } from 'vitest'
import { WebSocket } from 'ws'
import {
  startPreviewChatServer,
  type PreviewChatServer,
  type StartPreviewChatServerOptions,
} from '../node/host'
import { eachSeed } from '../../../../scripts/seeds.mjs'
import type { Sleep } from '../sleep'

/** Test harness: a real Node host on port 0, and clients that speak the wire contract. */

export const chatPath = '/rest/projects/p1/agents/v2/a1/chat'

export const hosts: PreviewChatServer[] = []

export async function startHost(
  options: StartPreviewChatServerOptions = {},
): Promise<PreviewChatServer> {
  const server = await startPreviewChatServer({
    dev: true,
    port: 0,
    host: '127.0.0.1',
    deltaMs: 0,
    snapshotMs: 5,
    ...options,
  })
  hosts.push(server)
  return server
}

export async function closeHosts(): Promise<void> {
  await Promise.all(hosts.splice(0).map((host) => host.close()))
}

/**
 * Collects, while the calling file's tests run, what would otherwise end the process (an uncaught
 * exception, an unhandled rejection), so that a test can say nothing was left unhandled.
 */
export function collectUnhandled(): unknown[] {
  const unhandled: unknown[] = []
  const collect = (error: unknown) => unhandled.push(error)
  beforeAll(() => {
    process.on('unhandledRejection', collect)
    process.on('uncaughtException', collect)
  })
  afterAll(() => {
    process.off('unhandledRejection', collect)
    process.off('uncaughtException', collect)
  })
  return unhandled
}

/** Polls `check` until it holds; fails after `timeoutMs` (a bound, not a timing assertion). */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/**
 * A `Sleep` the test drives: while closed, every pause of the agent waits for `step()` or
 * `open()`; once open, pauses only yield to the event loop.
 */
export function createGate() {
  const waiting: { resolve: () => void }[] = []
  let isOpen = false
  const sleep: Sleep = (_ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error)
      if (isOpen) return setImmediate(resolve)
      const entry = {
        resolve: () => {
          signal.removeEventListener('abort', onAbort)
          resolve()
        },
      }
      const onAbort = () => {
        waiting.splice(waiting.indexOf(entry), 1)
        reject(signal.reason as Error)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      waiting.push(entry)
    })
  return {
    sleep,
    get paused() {
      return waiting.length
    },
    step() {
      waiting.shift()?.resolve()
    },
    open() {
      isOpen = true
      for (const entry of waiting.splice(0)) entry.resolve()
    },
  }
}

/** Timers whose callbacks run only when the test says so. */
export function manualTimers() {
  const pending = new Map<number, () => void>()
  let nextId = 0
  return {
    timers: {
      setTimeout: (callback: () => void) => {
        pending.set(++nextId, callback)
        return nextId
      },
      clearTimeout: (handle: unknown) => void pending.delete(handle as number),
      now: () => performance.now(),
    },
    /** Runs every callback due now (not those they schedule). */
    fire() {
      const due = [...pending.entries()]
      pending.clear()
      for (const [, callback] of due) callback()
    },
  }
}

/** `null`: no user at all. */
let userHeaders: ((user: string) => Record<string, string>) | undefined

/**
 * How this file's clients name their user: the development users' bearer header by default, or
 * `headers` (for a backend with its own `authenticate`).
 */
export function authenticateBy(headers?: (user: string) => Record<string, string>): void {
  userHeaders = headers
}

export function authHeaders(user: string | null): Record<string, string> {
  if (user === null) return {}
  return userHeaders ? userHeaders(user) : { Authorization: `Bearer ${user}` }
}

export function post(
  server: PreviewChatServer,
  path: string,
  body: unknown,
  user: string | null = 'alice',
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...authHeaders(user) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal && { signal }),
  })
}

export function chat(
  server: PreviewChatServer,
  body: { message: string; sessionId?: string; newSession?: true },
  user = 'alice',
  signal?: AbortSignal,
) {
  return post(server, chatPath, body, user, signal)
}

export function resume(
  server: PreviewChatServer,
  body: { runId: string; toolCallId: string; resumeData: unknown },
  user = 'alice',
  signal?: AbortSignal,
) {
  return post(server, `${chatPath}/resume`, body, user, signal)
}

export async function readHistory(
  server: PreviewChatServer,
  threadId: string,
  user = 'alice',
): Promise<HistorySnapshot> {
  const response = await fetch(`${server.url}${chatPath}/${threadId}/messages`, {
    headers: authHeaders(user),
  })
  if (response.status !== 200) throw new Error(`history read answered ${response.status}`)
  const parsed = parseHistorySnapshot(await response.json())
  if (!parsed.success) throw parsed.error
  return parsed.value
}

export async function del(server: PreviewChatServer, path: string, user = 'alice') {
  const response = await fetch(`${server.url}${path}`, {
    method: 'DELETE',
    headers: authHeaders(user),
  })
  return { status: response.status, body: (await response.json()) as unknown }
}

export const stopPath = (threadId: string, executionId: string) =>
  `${chatPath}/${threadId}/executions/${executionId}`

/**
 * Reads an SSE stream event by event, each `data:` block through `parse` (which throws on what
 * it does not accept): a turn stream (`TurnReader`), or one with the queue's events too.
 */
export class StreamReader<E extends { type: string }> {
  readonly events: E[] = []
  readonly comments: string[] = []
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>
  private readonly decoder = new TextDecoder()
  private pending: E[] = []
  // The SSE framing, read by eventsource-parser (as the client reads it); comments are kept, as
  // the contract's tests check them (`:ok`, `:ping`).
  private readonly parser = createParser({
    onEvent: (event) => void this.pending.push(this.parse(event.data)),
    onComment: (comment) => void this.comments.push(`:${comment}`),
    onError: (error) => {
      throw new Error(`unexpected SSE line: ${error.message}`)
    },
  })
  ended = false

  constructor(
    readonly response: Response,
    private readonly parse: (data: string) => E,
  ) {
    if (!response.body) throw new Error('turn stream has no body')
    this.reader = response.body.getReader()
  }

  async next(): Promise<E | undefined> {
    while (this.pending.length === 0) {
      if (this.ended) return undefined
      const { done, value } = await this.reader.read()
      if (done) {
        this.ended = true
        break
      }
      this.parser.feed(this.decoder.decode(value, { stream: true }))
    }
    const event = this.pending.shift()
    if (event) this.events.push(event)
    return event
  }

  async until<T extends E['type']>(type: T): Promise<Extract<E, { type: T }>> {
    for (;;) {
      const event = await this.next()
      if (!event) throw new Error(`stream ended before ${type}`)
      if (event.type === type) return event as Extract<E, { type: T }>
    }
  }

  /** Reads to the end of the stream; returns every event read so far. */
  async rest(): Promise<E[]> {
    while (await this.next());
    return this.events
  }
}

/** One `data:` block as a turn event of the core contract; throws on anything else. */
function turnEventOf(data: string): TurnEvent {
  const parsed = parseTurnEvent(data)
  if (parsed.kind !== 'event') throw new Error(`invalid turn event: ${data}`)
  return parsed.event
}

/** Reads a turn stream event by event, validating each one against the core contract. */
export class TurnReader extends StreamReader<TurnEvent> {
  constructor(response: Response) {
    super(response, turnEventOf)
  }
}

export async function turn(response: Promise<Response>): Promise<TurnReader> {
  const answer = await response
  if (answer.status !== 200) throw new Error(`turn answered ${answer.status}`)
  return new TurnReader(answer)
}

/**
 * A turn of `sessionId` suspended on `server` (the scripted agent's `/suspend`; `server`'s agent
 * must not wait), and a second host on the same store and bus, started by `start`, whose agent
 * waits on `gate` until the test opens it: another main that takes a resume or another user's
 * request while the suspension is on record.
 */
export async function suspendedWithSecondHost(
  server: PreviewChatServer,
  sessionId: string,
  start: typeof startHost = startHost,
) {
  const suspended = await (
    await turn(chat(server, { message: '/suspend', sessionId, newSession: true }))
  ).until('tool-call-suspended')
  const gate = createGate()
  const host = await start({
    sleep: gate.sleep,
    store: server.backend.store,
    bus: server.backend.bus,
  })
  return { suspended, gate, host }
}

/** One push connection (one tab) over WebSocket. */
export async function openPushSocket(server: PreviewChatServer, user: string) {
  const messages: PushMessage[] = []
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/rest/push`, {
    headers: authHeaders(user),
  })
  socket.on('message', (data: Buffer) => {
    const parsed = parsePushMessage(data.toString('utf8'))
    if (parsed.kind === 'message') messages.push(parsed.message)
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  return { socket, messages, close: () => socket.close() }
}

/**
 * Sends raw bytes over TCP and closes: a client that disconnects mid-write. Resolves once the
 * socket is closed.
 */
export function sendRawAndClose(server: PreviewChatServer, bytes: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(bytes, () => {
        socket.destroy()
      })
    })
    socket.on('error', () => undefined)
    socket.on('close', () => resolve())
  })
}

/** What `send` got back: the answer, and whether it came over a connection opened before. */
export interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
  reusedSocket: boolean
}

export interface SendOptions {
  method?: string
  path: string
  headers?: Record<string, string>
  body?: string | Buffer
  /** A keep-alive agent with one socket sends every request over the same connection. */
  agent?: Agent
  timeoutMs?: number
  /** Resolve an SSE answer with its first chunk, and leave (for a stream that never ends). */
  untilFirstChunk?: boolean
}

/**
 * One request through `node:http`, which (unlike fetch) sends any method, header, cookie or body
 * as given and says whether the request went over a reused connection. An upgrade that succeeds
 * resolves with status 101 (its socket closed at once). Rejects when no answer comes.
 */
export function send(
  server: Pick<PreviewChatServer, 'port'>,
  options: SendOptions,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port: server.port,
      method: options.method ?? 'GET',
      path: options.path,
      headers: options.headers,
      agent: options.agent,
      timeout: options.timeoutMs ?? 5000,
    })
    req.on('response', (res) => {
      const answer = (body: string): Answer => ({
        status: res.statusCode ?? 0,
        headers: res.headers,
        body,
        reusedSocket: req.reusedSocket,
      })
      // A push stream never ends: its first chunk (`:ok`) is the answer.
      if (options.untilFirstChunk && res.headers['content-type']?.startsWith('text/event-stream')) {
        res.once('data', (chunk: Buffer) => {
          resolve(answer(chunk.toString('utf8')))
          req.destroy()
        })
        return
      }
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => resolve(answer(Buffer.concat(chunks).toString('utf8'))))
    })
    req.on('upgrade', (res, socket) => {
      socket.destroy()
      resolve({ status: 101, headers: res.headers, body: '', reusedSocket: req.reusedSocket })
    })
    req.on('timeout', () => req.destroy(new Error(`no answer to ${options.method} in time`)))
    req.on('error', reject)
    req.end(options.body)
  })
}

/** The headers of a WebSocket handshake (RFC 6455's sample key). */
export const upgradeHeaders = {
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
  'Sec-WebSocket-Version': '13',
}

/** An agent that sends every request over one kept-alive connection (while the server keeps it). */
export const oneConnection = () => new Agent({ keepAlive: true, maxSockets: 1 })

/** Every 4xx and 5xx answer is a JSON `{ code, message, hint? }` (wire contract). */
export function errorBodyOf(answer: Pick<Answer, 'headers' | 'body'>): {
  code: string
  message: string
  hint?: string
} {
  const type = answer.headers['content-type'] ?? ''
  if (!type.startsWith('application/json')) throw new Error(`error answer typed "${type}"`)
  const body = JSON.parse(answer.body) as Record<string, unknown>
  const { code, message, hint, ...rest } = body
  if (typeof code !== 'string' || typeof message !== 'string') {
    throw new Error(`error body without code and message: ${answer.body}`)
  }
  if (hint !== undefined && typeof hint !== 'string') throw new Error(`hint is not text`)
  if (Object.keys(rest).length > 0) throw new Error(`error body with more: ${answer.body}`)
  return { code, message, ...(hint !== undefined && { hint }) }
}

/**
 * Writes raw bytes to the host and collects what it answers. Once the host has said nothing for
 * `quietMs` (it may still be answering a request it parsed), the client ends its side; the
 * exchange is over when the host closes. `closed` is false if it had not closed `timeoutMs` later.
 */
export function rawExchange(
  server: Pick<PreviewChatServer, 'port'>,
  bytes: string | Uint8Array,
  { quietMs = 50, timeoutMs = 3000 } = {},
): Promise<{ answer: string; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let quiet: ReturnType<typeof setTimeout> | undefined
    let deadline: ReturnType<typeof setTimeout> | undefined
    const endWhenQuiet = () => {
      clearTimeout(quiet)
      quiet = setTimeout(() => {
        socket.end()
        deadline = setTimeout(() => finish(false), timeoutMs)
      }, quietMs)
    }
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes)
      endWhenQuiet()
    })
    const finish = (closed: boolean) => {
      clearTimeout(quiet)
      clearTimeout(deadline)
      socket.destroy()
      resolve({ answer: Buffer.concat(chunks).toString('latin1'), closed })
    }
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      if (deadline === undefined) endWhenQuiet()
    })
    socket.on('error', () => undefined)
    socket.on('close', () => finish(true))
  })
}

/** A bounded property run: `numRuns` runs of it, replayed with `file` (a path and a `-t`). */
export interface PropertyRuns {
  numRuns: number
  file: string
}

export function propertyRuns(numRuns: number, file: string): PropertyRuns {
  return { numRuns, file }
}

/**
 * `fc.assert` on each seed of the test running now (scripts/seeds.mjs: the committed list, or
 * `PREVIEW_CHAT_SEED`), each printed with the command that replays it. A step budget, never a
 * time limit: two runs of one commit run the same cases.
 */
export function assertProperty<T>(
  property: fc.IProperty<T> | fc.IAsyncProperty<T>,
  { numRuns, file }: PropertyRuns,
): void | Promise<void> {
  const name = expect.getState().currentTestName ?? file
  return eachSeed(
    name,
    (seed) => fc.assert(property as fc.IProperty<T>, { numRuns, seed }),
    (seed) => `PREVIEW_CHAT_SEED=${seed} npx vitest run --project server ${file}`,
  )
}
