import { createParser } from 'eventsource-parser'
import { isTerminalEvent, parseTurnEvent, type TurnEvent } from './contract/events'
import { parseJson, type ParseResult } from './contract/result'
import {
  errorFromResponse,
  parseRunCancelAnswer,
  parseStopAnswer,
  type ChatRequestBody,
  type ResumeRequestBody,
  type RunCancelAnswer,
  type StopAnswer,
} from './contract/rest'
import { parseHistorySnapshot, type HistorySnapshot } from './contract/snapshot'
import type { Timers } from './environment'
import { PreviewChatError } from './errors'

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
  /** How long a history read or a Stop may take before it counts as failed. */
  requestTimeoutMs: number
  timers: Timers
}

/** Identifies a thread. */
export interface ThreadKey {
  projectId: string
  agentId: string
  threadId: string
}

const enc = encodeURIComponent
const agentPath = (key: Omit<ThreadKey, 'threadId'>) =>
  `/projects/${enc(key.projectId)}/agents/v2/${enc(key.agentId)}/chat`

/**
 * The REST and SSE calls of the wire contract. Every answer goes through the contract's parsers:
 * nothing past this module handles unvalidated data.
 */
export function createTransport(options: TransportOptions) {
  const base = options.baseUrl.replace(/\/+$/, '')

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
      return await options.fetch(`${base}${path}`, { ...init, headers, signal: signal ?? null })
    } catch (cause) {
      if (signal?.aborted && signal.reason instanceof PreviewChatError) throw signal.reason
      throw new PreviewChatError(
        'network_error',
        `${what} got no answer (${describe(cause)}). Check the connection; the client retries reads on its own.`,
        { cause },
      )
    }
  }

  /**
   * A JSON call with a timeout (and the caller's `signal`, e.g. TanStack Query cancelling the
   * read); the answer is validated by `parse`.
   */
  async function json<T>(
    path: string,
    init: RequestInit,
    what: string,
    parse: (body: unknown) => ParseResult<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const controller = new AbortController()
    const cancel = () => controller.abort(signal?.reason)
    signal?.addEventListener('abort', cancel, { once: true })
    const timer = options.timers.setTimeout(
      () =>
        controller.abort(
          new PreviewChatError(
            'timeout',
            `${what} got no answer within ${options.requestTimeoutMs} ms. The client retries on its own.`,
          ),
        ),
      options.requestTimeoutMs,
    )
    try {
      const response = await request(path, init, what, controller.signal)
      const text = await response.text().catch((cause: unknown) => {
        if (controller.signal.reason instanceof PreviewChatError) throw controller.signal.reason
        throw new PreviewChatError('network_error', `${what} was cut while its answer was read.`, {
          cause,
        })
      })
      const body = text === '' ? undefined : parseJson(text, `The answer of ${what}`)
      if (!response.ok)
        throw errorFromResponse(response.status, body?.success ? body.value : text, what)
      if (!body?.success)
        throw (
          body?.error ??
          new PreviewChatError('invalid_response', `${what} answered with an empty body.`)
        )
      const parsed = parse(body.value)
      if (!parsed.success) throw parsed.error
      return parsed.value
    } finally {
      options.timers.clearTimeout(timer)
      signal?.removeEventListener('abort', cancel)
    }
  }

  return {
    readHistory(key: ThreadKey, signal?: AbortSignal): Promise<HistorySnapshot> {
      return json(
        `${agentPath(key)}/${enc(key.threadId)}/messages`,
        { method: 'GET' },
        'The history read',
        parseHistorySnapshot,
        signal,
      )
    },

    stopExecution(key: ThreadKey, executionId: string): Promise<StopAnswer> {
      return json(
        `${agentPath(key)}/${enc(key.threadId)}/executions/${enc(executionId)}`,
        { method: 'DELETE' },
        'Stop',
        parseStopAnswer,
      )
    },

    cancelRun(key: ThreadKey, runId: string): Promise<RunCancelAnswer> {
      return json(
        `${agentPath(key)}/runs/${enc(runId)}`,
        { method: 'DELETE' },
        'Cancelling the suspended run',
        parseRunCancelAnswer,
      )
    },

    /** Posts a message or a resume; resolves with the open turn stream, or throws a typed error. */
    async openTurn(
      key: ThreadKey,
      body:
        { kind: 'message'; body: ChatRequestBody } | { kind: 'resume'; body: ResumeRequestBody },
      signal: AbortSignal,
    ): Promise<ReadableStream<Uint8Array>> {
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
      if (!response.ok) {
        const text = await response.text().catch(() => '')
        const parsed = text ? parseJson(text, 'The error body') : undefined
        throw errorFromResponse(response.status, parsed?.success ? parsed.value : text, what)
      }
      if (!response.body)
        throw new PreviewChatError('invalid_response', `${what} answered without a stream body.`)
      return response.body
    },
  }
}

export type Transport = ReturnType<typeof createTransport>

/** How a turn stream ended. */
export type TurnStreamEnd =
  | { kind: 'terminal' }
  /** Closed or failed before a terminal event: recover from history, never send again. */
  | { kind: 'cut'; error: PreviewChatError }
  /** The reader was cancelled (session disposed). */
  | { kind: 'aborted' }

/**
 * Reads an SSE turn stream, calling `onEvents` with the contract events of each network chunk, in
 * order (one call per chunk, so that a burst of deltas costs one state change, not hundreds).
 * Unknown event types are skipped (forward compatibility); a malformed event cuts the stream,
 * since what follows it cannot be trusted, and history is authoritative anyway.
 */
export async function readTurnStream(
  body: ReadableStream<Uint8Array>,
  onEvents: (events: TurnEvent[]) => void,
  signal: AbortSignal,
): Promise<TurnStreamEnd> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let ended = false
  let invalid: PreviewChatError | null = null
  let batch: TurnEvent[] = []
  const parser = createParser({
    onEvent(message) {
      if (ended || invalid) return
      const parsed = parseTurnEvent(message.data)
      if (parsed.kind === 'invalid') invalid = parsed.error
      else if (parsed.kind === 'event') {
        batch.push(parsed.event)
        if (isTerminalEvent(parsed.event)) ended = true
      }
    },
  })
  const cancel = () => void reader.cancel().catch(() => {})
  signal.addEventListener('abort', cancel, { once: true })
  try {
    while (!ended && !invalid) {
      const { done, value } = await reader.read()
      if (done) break
      parser.feed(decoder.decode(value, { stream: true }))
      if (batch.length > 0) {
        const events = batch
        batch = []
        onEvents(events)
      }
    }
    if (signal.aborted) return { kind: 'aborted' }
    if (ended) return { kind: 'terminal' }
    return {
      kind: 'cut',
      error:
        invalid ??
        new PreviewChatError(
          'stream_cut',
          'The turn stream closed before the turn ended; recovering it from history.',
        ),
    }
  } catch (cause) {
    if (signal.aborted) return { kind: 'aborted' }
    return {
      kind: 'cut',
      error: new PreviewChatError(
        'stream_cut',
        `The turn stream failed (${describe(cause)}); recovering it from history.`,
        { cause },
      ),
    }
  } finally {
    signal.removeEventListener('abort', cancel)
    if (ended || invalid) cancel()
  }
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause)
}
