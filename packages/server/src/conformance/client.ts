/**
 * The suite's tiny HTTP client: it speaks only the wire contract (wire-contract.md), over the
 * `fetch` it is given, to a server it knows nothing else about. What comes back goes through core's
 * contract parsers (`@preview-chat/core/contract`) and its one SSE reader, as the client reads it.
 */
import {
  parsePushMessage,
  parseTurnEvent,
  type PushMessage,
  type TurnEvent,
} from '@preview-chat/core/contract'
import { readSse } from '@preview-chat/core/internal'

/** Who sends a request: the thread's owner, another user, a user with `agent:read` only, or no one. */
export type Caller = 'owner' | 'other' | 'readOnly' | 'anonymous'

/** Where the server is and who may call it. */
export interface ConformanceTarget {
  /** The REST base, e.g. `http://127.0.0.1:4317/rest`. */
  baseUrl: string
  projectId: string
  agentId: string
  /** The request headers that name each caller (`anonymous` sends none). */
  credentials: Partial<Record<Exclude<Caller, 'anonymous'>, Record<string, string>>>
  /** Appended to the push channel's URL (the released n8n 2.41 wants `pushRef=<id>`). */
  pushQuery?: string
  fetch: typeof fetch
}

/** A plain answer, its body read as text (and as JSON when it is JSON). */
export interface Answer {
  status: number
  headers: Headers
  text: string
  json: unknown
}

/** A turn stream's answer: the head, then its events as core's parsers read them. */
export class TurnStream {
  /** Every event read so far. */
  readonly events: TurnEvent[] = []
  /** `data:` blocks the contract's parser refused, with its error. */
  readonly invalid: string[] = []
  /** The body's first characters, as sent (the stream opens with the comment `:ok`). */
  opening = ''
  private readonly queue: string[] = []
  private wake: () => void = () => {}
  private ended = false

  constructor(
    readonly response: Response,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener('abort', () => this.wake(), { once: true })
    const body = response.body
    if (!body) {
      this.ended = true
      return
    }
    const opening = new TextDecoder()
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        if (this.opening.length < 16) this.opening += opening.decode(chunk, { stream: true })
        controller.enqueue(chunk)
      },
    })
    void readSse(
      body.pipeThrough(tap, { signal }),
      (data) => {
        this.queue.push(...data)
        this.wake()
        return undefined
      },
      signal,
    ).finally(() => {
      this.ended = true
      this.wake()
    })
  }

  /** The next event, or `undefined` once the stream has closed. Rejects when the check's time is up. */
  async next(): Promise<TurnEvent | undefined> {
    for (;;) {
      const data = this.queue.shift()
      if (data !== undefined) {
        const parsed = parseTurnEvent(data)
        if (parsed.kind === 'event') {
          this.events.push(parsed.event)
          return parsed.event
        }
        if (parsed.kind === 'invalid') this.invalid.push(`${data} (${parsed.error.message})`)
        continue
      }
      if (this.ended) return undefined
      this.signal.throwIfAborted()
      await new Promise<void>((resolve) => (this.wake = resolve))
    }
  }

  /** Reads to the end of the stream; returns every event. */
  async rest(): Promise<TurnEvent[]> {
    while (await this.next());
    return this.events
  }
}

/** The SSE push channel of one caller: the `agentExecutionUpdated` messages it heard. */
export interface PushChannel {
  status: number
  headers: Headers
  messages: PushMessage[]
  close(): void
}

/** The requests the checks send; each one ends with the check's `signal`. */
export function createClient(target: ConformanceTarget, signal: AbortSignal) {
  const base = target.baseUrl.replace(/\/+$/, '')
  const seg = encodeURIComponent
  const chat = `/projects/${seg(target.projectId)}/agents/v2/${seg(target.agentId)}/chat`
  const headersOf = (caller: Caller) =>
    caller === 'anonymous' ? {} : (target.credentials[caller] ?? {})

  const send = (
    method: string,
    path: string,
    caller: Caller,
    options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ) =>
    target.fetch(`${base}${path}`, {
      method,
      headers: {
        ...(options.body !== undefined && { 'Content-Type': 'application/json' }),
        ...headersOf(caller),
        ...options.headers,
      },
      ...(options.body !== undefined && {
        body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
      }),
      signal: options.signal ?? signal,
    })

  const answer = async (response: Response): Promise<Answer> => {
    const text = await response.text()
    let json: unknown
    try {
      json = text === '' ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  }

  return {
    paths: {
      chat,
      resume: `${chat}/resume`,
      messages: (threadId: string) => `${chat}/${seg(threadId)}/messages`,
      stop: (threadId: string, executionId: string) =>
        `${chat}/${seg(threadId)}/executions/${seg(executionId)}`,
      run: (runId: string) => `${chat}/runs/${seg(runId)}`,
    },
    /** One REST request, its answer read in full. */
    async request(
      method: string,
      path: string,
      caller: Caller,
      options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
    ): Promise<Answer> {
      return answer(await send(method, path, caller, options))
    },
    /**
     * A turn POST (`…/chat` or `…/chat/resume`): a `TurnStream` when it is answered with an event
     * stream, the plain answer else. `abort` closes this stream alone (the client leaving).
     */
    async turn(
      path: string,
      caller: Caller,
      body: unknown,
    ): Promise<{ stream: TurnStream; close: () => void } | { answer: Answer }> {
      const own = new AbortController()
      const both = AbortSignal.any([signal, own.signal])
      const response = await send('POST', path, caller, { body, signal: both })
      if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        return { answer: await answer(response) }
      }
      return { stream: new TurnStream(response, both), close: () => own.abort() }
    },
    /** Opens `GET /push` as SSE (`Accept: text/event-stream`) and collects what it announces. */
    async push(caller: Caller): Promise<PushChannel> {
      const own = new AbortController()
      const query = target.pushQuery ? `?${target.pushQuery}` : ''
      const response = await send('GET', `/push${query}`, caller, {
        headers: { Accept: 'text/event-stream' },
        signal: AbortSignal.any([signal, own.signal]),
      })
      const messages: PushMessage[] = []
      if (response.ok && response.body) {
        void readSse(
          response.body,
          (data) => {
            for (const frame of data) {
              const parsed = parsePushMessage(frame)
              if (parsed.kind === 'message') messages.push(parsed.message)
            }
            return undefined
          },
          own.signal,
        )
      } else {
        await response.body?.cancel()
      }
      return {
        status: response.status,
        headers: response.headers,
        messages,
        close: () => own.abort(),
      }
    },
  }
}

export type ConformanceClient = ReturnType<typeof createClient>
