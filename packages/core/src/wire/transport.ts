import { capabilitiesHeader, capabilityTokens } from './contract/capabilities'
import {
  deltaJoin,
  isDeltaEvent,
  isTerminalEvent,
  readDeltaEvent,
  parseTurnEvent,
  turnEventFrom,
  type TurnEvent,
  type TurnEventParseResult,
} from './contract/events'
import type { ThreadKey } from './contract/ids'
import { parseJson, type ParseResult } from './contract/result'
import {
  errorFromResponse,
  parseRetryAfter,
  parseRunCancelAnswer,
  parseStopAnswer,
  type RunCancelAnswer,
  type StopAnswer,
} from './contract/rest'
import type { TurnRequest } from './contract/requests'
import {
  createSnapshotReuse,
  type CompleteSnapshot,
  parseHistorySnapshot,
  type HistorySnapshot,
  type SnapshotReuse,
} from './contract/snapshot'
import type { Timers } from '../platform/environment'
import { describeValue, PreviewChatError } from './contract/errors'
import { readSse } from './sse'
import { explain } from './contract/explain'

/** Headers for every request (e.g. `Authorization`), or a function called per request. */
export type HeadersOption =
  Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>)

/** The headers now: a plain object as is (no extra tick before the request), a function called. */
export function resolveHeaders(
  option: HeadersOption | undefined,
): Record<string, string> | Promise<Record<string, string>> {
  return typeof option === 'function' ? option() : (option ?? {})
}

export interface TransportOptions {
  /** REST base, `/rest` by default. */
  baseUrl: string
  fetch: typeof globalThis.fetch
  headers?: HeadersOption
  credentials?: RequestCredentials
  /** How long a history read or a Stop may take before it counts as failed. */
  requestTimeoutMs: number
  timers: Timers
  /** Fills in what a server leaves out of a snapshot (`releasedPlatform()`'s); else such a read fails. */
  completeSnapshot?: CompleteSnapshot
}

const enc = encodeURIComponent
/** How many threads' last reads the transport keeps for the next read to reuse. */
const KEPT_READS = 4
const agentPath = (key: Omit<ThreadKey, 'threadId'>) =>
  `/projects/${enc(key.projectId)}/agents/v2/${enc(key.agentId)}/chat`

/**
 * A thread's path under the REST base (`/projects/:projectId/agents/v2/:agentId/chat/:threadId`),
 * each id one encoded segment: where its routes are, for the transport's `call`.
 */
export const threadPath = (key: ThreadKey) => `${agentPath(key)}/${enc(key.threadId)}`

/**
 * The REST and SSE calls of the wire contract. Every answer goes through the contract's parsers:
 * nothing past this module handles unvalidated data.
 */
export function createTransport(options: TransportOptions) {
  const base = options.baseUrl.replace(/\/+$/, '')
  /**
   * The last read of the threads read most recently, so that the next read of one validates only
   * the messages that changed (`SnapshotReuse`), and is asked for conditionally (the snapshot it
   * gave, the body's text and ETag). A few threads: an app follows one or two at once.
   */
  const lastReads = new Map<string, SnapshotReuse>()
  const lastRead = (path: string) => {
    const reuse = lastReads.get(path) ?? createSnapshotReuse()
    // Kept most recent last: the first key is the thread read longest ago.
    lastReads.delete(path)
    lastReads.set(path, reuse)
    if (lastReads.size > KEPT_READS) lastReads.delete(lastReads.keys().next().value as string)
    return reuse
  }

  async function request(
    path: string,
    init: RequestInit,
    what: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    const extra = resolveHeaders(options.headers)
    const headers = {
      accept: 'application/json',
      ...(extra instanceof Promise ? await extra : extra),
      ...(init.headers as Record<string, string>),
    }
    try {
      return await options.fetch(`${base}${path}`, {
        ...init,
        headers,
        signal: signal ?? null,
        ...(options.credentials && { credentials: options.credentials }),
      })
    } catch (cause) {
      if (signal?.aborted && signal.reason instanceof PreviewChatError) throw signal.reason
      throw new PreviewChatError(
        'network_error',
        `${what} got no answer (${describeValue(cause)}).${explain('no-answer', base || '/')}`,
        { cause },
      )
    }
  }

  /**
   * A JSON call with a timeout (and the caller's `signal`, e.g. TanStack Query cancelling the
   * read); the answer is validated by `parse`. `answered` may settle it first from the response
   * and its text (a history read's `304`, or the body it holds already).
   */
  async function json<T>(
    path: string,
    init: RequestInit,
    what: string,
    parse: (body: unknown, response: Response, text: string) => ParseResult<T>,
    signal?: AbortSignal,
    answered?: (response: Response, text: string) => T | undefined,
  ): Promise<T> {
    const controller = new AbortController()
    const cancel = () => controller.abort(signal?.reason)
    signal?.addEventListener('abort', cancel, { once: true })
    const timer = options.timers.setTimeout(
      () =>
        controller.abort(
          new PreviewChatError(
            'timeout',
            `${what} got no answer within ${options.requestTimeoutMs} ms.${explain('request-timeout')}`,
          ),
        ),
      options.requestTimeoutMs,
    )
    try {
      const response = await request(path, init, what, controller.signal)
      const text = await response.text().catch((cause: unknown) => {
        if (controller.signal.reason instanceof PreviewChatError) throw controller.signal.reason
        throw new PreviewChatError(
          'network_error',
          `${what} was cut while its answer was read.${explain('answer-cut')}`,
          {
            cause,
          },
        )
      })
      const early = answered?.(response, text)
      if (early !== undefined) return early
      if (!response.ok) throw failure(response, text, what)
      if (text === '')
        throw new PreviewChatError(
          'invalid_response',
          `${what} answered with an empty body.${explain('not-the-contract')}`,
        )
      const body = parseJson(text, `The answer to ${lower(what)}`)
      if (!body.success) throw body.error
      const parsed = parse(body.value, response, text)
      if (!parsed.success) throw parsed.error
      return parsed.value
    } finally {
      options.timers.clearTimeout(timer)
      signal?.removeEventListener('abort', cancel)
    }
  }

  return {
    /** What completes a snapshot a server left incomplete (the client's `releasedPlatform()`). */
    completeSnapshot: options.completeSnapshot,
    /**
     * A JSON call (`path` under the base URL, e.g. `threadPath(key) + '/queue'`) with this
     * client's headers, credentials and timeout, its answer checked by `parse` (and settled first
     * by `answered`, where given): what every read and Stop here is made of, and how an opt-in
     * part (the queue of `@preview-chat/core/queue`) calls the routes it knows, so that none of
     * them, nor a seam of theirs, is in this module.
     */
    call: json,

    /**
     * The thread's history, asked for with `If-None-Match` when this client holds a read of it
     * with an ETag. A `304`, or a body equal to the one held, gives back the very snapshot that
     * read gave: nothing parsed or validated, and the same object, so TanStack Query's structural
     * sharing and the session see nothing new. A 304 stands for the version its request named (a
     * read answering meanwhile does not change that); one to a request that named none is an
     * error, and the next read is as plain. `held`: the snapshot the caller shows, whose
     * messages an answer may repeat (validated already) when this client has not read the thread.
     */
    readHistory(
      key: ThreadKey,
      signal?: AbortSignal,
      held?: HistorySnapshot | null,
      heard?: (capabilities: string[]) => void,
    ): Promise<HistorySnapshot> {
      const path = `${threadPath(key)}/messages`
      const reuse = lastRead(path)
      // No read of this thread yet (a reload): what the session shows instead — a transcript kept
      // across the reload, the app's cache — was checked when it was taken, so its messages are
      // the ones to find again; only a hint, as the last read's are (issue 30: checked once).
      if (reuse.messages.length === 0 && held) reuse.messages = held.messages
      const { etag, snapshot } = reuse
      return json(
        path,
        { headers: etag ? conditional(etag) : {} },
        'The history read',
        (body, response, text) => {
          const parsed = parseHistorySnapshot(body, reuse, options.completeSnapshot)
          if (parsed.success)
            Object.assign(reuse, {
              snapshot: parsed.value,
              text,
              etag: response.headers.get('etag'),
            })
          return parsed
        },
        signal,
        (response, text) => {
          // What the server offers, where it says so (any answer: the capabilities header).
          const offered = response.headers.get(capabilitiesHeader)
          if (offered !== null && heard) heard(capabilityTokens(offered))
          // A 304 to a read that named no version is no answer: the HTTP error it is (`http_error`).
          if (response.status === 304) return etag ? snapshot : undefined
          return response.ok && text === reuse.text ? reuse.snapshot : undefined
        },
      )
    },

    stopExecution(key: ThreadKey, executionId: string, signal?: AbortSignal): Promise<StopAnswer> {
      return json(
        `${threadPath(key)}/executions/${enc(executionId)}`,
        { method: 'DELETE' },
        'Stop',
        parseStopAnswer,
        signal,
      )
    },

    cancelRun(key: ThreadKey, runId: string, signal?: AbortSignal): Promise<RunCancelAnswer> {
      return json(
        `${agentPath(key)}/runs/${enc(runId)}`,
        { method: 'DELETE' },
        'Cancelling the suspended run',
        parseRunCancelAnswer,
        signal,
      )
    },

    /** Posts a message or a resume; resolves with the open turn stream, or throws a typed error. */
    async openTurn(
      key: ThreadKey,
      body: TurnRequest,
      signal: AbortSignal,
    ): Promise<{ body: ReadableStream<Uint8Array>; capabilities: string[] }> {
      const what = body.kind === 'message' ? 'Sending the message' : 'Resuming the turn'
      const path = body.kind === 'message' ? agentPath(key) : `${agentPath(key)}/resume`
      const response = await request(
        path,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(body.body),
        },
        what,
        signal,
      )
      if (!response.ok) throw failure(response, await response.text().catch(() => ''), what)
      const type = response.headers.get('content-type') ?? ''
      if (!/^text\/event-stream\b/i.test(type)) {
        // A proxy's page or a wrong base URL: not a turn stream. Not read, so nothing is cancelled.
        void response.body?.cancel().catch(() => {})
        throw new PreviewChatError(
          'invalid_response',
          `${what} was answered with "${type || 'no content type'}" instead of an event stream ` +
            `(HTTP ${response.status} from ${response.url || base}).${explain('not-an-event-stream')}`,
          { status: response.status },
        )
      }
      if (!response.body)
        throw new PreviewChatError(
          'invalid_response',
          `${what} answered without a stream body.${explain('not-an-event-stream')}`,
        )
      // What the server says it can do, from the answer's header: its tokens, as data.
      return {
        body: response.body,
        capabilities: capabilityTokens(response.headers.get(capabilitiesHeader)),
      }
    },
  }
}

export type Transport = ReturnType<typeof createTransport>

export type { ThreadKey } from './contract/ids'
export type { TurnRequest } from './contract/requests'

/**
 * A REST failure as a typed error, from the text of its body (its JSON, when it is JSON), with the
 * server's `Retry-After` when it sent one.
 */
function failure(response: Response, text: string, what: string): PreviewChatError {
  // Not JSON (an HTML page, a proxy's text, nothing): the text itself.
  const json = parseJson(text, what)
  const body = json.success ? json.value : text
  const retryAfterMs = parseRetryAfter(
    response.headers.get('retry-after'),
    response.headers.get('date'),
  )
  return errorFromResponse(response.status, body, what, retryAfterMs)
}

/**
 * The headers of a read that names the version held: `If-None-Match`, and the request's own
 * `Cache-Control`, so that no fetch turns it into "no-cache". By the Fetch standard ("HTTP-network-
 * or-cache fetch") a request carrying `If-None-Match` is made in cache mode `no-store`, as one
 * with `cache: 'no-store'` is, and such a request gets `Cache-Control: no-cache` (and `Pragma:
 * no-cache`) unless it has a `Cache-Control` of its own: Node's fetch sends it, and a server
 * answers `no-cache` in full, never 304 (Express's `fresh`, so n8n 2.41). `max-age=0` asks any
 * cache on the way (a proxy) to revalidate at the server, which then answers 304; `Pragma` is
 * ignored where `Cache-Control` is present (RFC 9111 5.4). Why this and not a `cache` option:
 * docs/decisions/conditional-read-headers.md.
 */
const conditional = (etag: string) => ({ 'if-none-match': etag, 'cache-control': 'max-age=0' })

const lower = (what: string) => what.charAt(0).toLowerCase() + what.slice(1)

/** How a turn stream ended. */
export type TurnStreamEnd =
  | { kind: 'terminal' }
  /** Closed or failed before a terminal event: recover from history, never send again. */
  | { kind: 'cut'; error: PreviewChatError }
  /** The reader was cancelled (the session went quiet or was disposed). */
  | { kind: 'aborted' }

/**
 * Reads an SSE turn stream, calling `onEvents` with the contract events of each network chunk, in
 * order (one call per chunk, so that a burst of deltas costs one state change, not hundreds). What
 * follows the turn's terminal event is ignored, and read until the server closes. Unknown and
 * malformed events are skipped and reported to `warn`: the stream is never closed for what it
 * carries (on some servers that cancels the turn), and the record corrects what was skipped.
 *
 * The hot path: a delta in the servers' own form is read in place (`readDeltaEvent`: its strings
 * sliced from the text, no `JSON.parse` and no object per event), any other event is parsed once,
 * and consecutive deltas of one stream are joined into one event as they come (`deltaJoin`, the
 * fold's own join), so a chunk of hundreds of deltas makes one event.
 */
export async function readTurnStream(
  body: ReadableStream<Uint8Array>,
  onEvents: (events: TurnEvent[]) => void,
  signal: AbortSignal,
  warn: (message: string) => void = () => {},
): Promise<TurnStreamEnd> {
  let ended = false
  const end = await readSse(
    body,
    (messages) => {
      // After the terminal event nothing the server sends matters; the stream is still read to its
      // end rather than cancelled, so that a finished turn's POST ends as the server closes it (no
      // aborted request in the browser's network panel, no reset connection).
      if (ended) return true
      const events: TurnEvent[] = []
      const deltas = deltaJoin((event) => events.push(event))
      for (const data of messages) {
        const delta = readDeltaEvent(data)
        if (delta) {
          deltas.add(delta)
          continue
        }
        let raw: unknown
        let parsed: TurnEventParseResult | undefined
        try {
          raw = JSON.parse(data)
        } catch {
          // Parsed again only to report it as every malformed event is reported.
          parsed = parseTurnEvent(data)
        }
        if (!parsed && isDeltaEvent(raw)) {
          deltas.add(raw)
          continue
        }
        parsed ??= turnEventFrom(raw)
        if (parsed.kind === 'ignored')
          warn(
            `Skipped turn stream events of unknown type "${parsed.type}".${explain('stream-event-skipped')}`,
          )
        else if (parsed.kind === 'invalid')
          warn(`Skipped a turn stream event: ${parsed.error.message}`)
        else {
          deltas.flush()
          events.push(parsed.event)
          if (isTerminalEvent(parsed.event)) {
            ended = true
            break
          }
        }
      }
      deltas.flush()
      if (events.length > 0) onEvents(events)
      return true
    },
    signal,
  )
  if (end.kind === 'aborted') return end
  if (ended) return { kind: 'terminal' }
  const failed = end.kind === 'failed'
  return {
    kind: 'cut',
    error: new PreviewChatError(
      'stream_cut',
      `The turn stream ${failed ? `failed (${describeValue(end.cause)})` : 'closed before the turn ended'}; recovering it from history.${explain('stream-cut')}`,
      failed ? { cause: end.cause } : {},
    ),
  }
}
