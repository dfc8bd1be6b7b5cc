import { createParser } from 'eventsource-parser'
import {
  parsePushMessage,
  parseQueuePushMessage,
  queueEventFrom,
  turnEventFrom,
  type QueueTurnEvent,
  type ServerPushMessage,
  type TurnEvent,
} from '@preview-chat/core/contract'
import { WebSocket } from 'ws'
import type { PreviewChatServer } from '../node/host'
import { authHeaders, chatPath, post, startHost } from './harness'

/** Clients of the next-era flavor: its turn streams carry queue events beside the turn's. */

export type StreamEvent = TurnEvent | QueueTurnEvent

export const startQueueHost = (options: Parameters<typeof startHost>[0] = {}) =>
  startHost({ flavor: 'next-era', ...options })

export const queuePath = (threadId: string, queueId?: string, action?: 'reorder' | 'steer') =>
  `${chatPath}/${threadId}/queue${queueId === undefined ? '' : `/${queueId}`}${action ? `/${action}` : ''}`

/** A chat POST's stream, each event parsed by core's parsers (turn events, then queue events). */
export class QueueStream {
  readonly events: StreamEvent[] = []
  private pending: StreamEvent[] = []
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>
  private readonly decoder = new TextDecoder()
  private readonly parser = createParser({
    onEvent: (event) => {
      const raw: unknown = JSON.parse(event.data)
      const turn = turnEventFrom(raw)
      if (turn.kind === 'event') return void this.pending.push(turn.event)
      const queued = queueEventFrom(raw)
      if (queued.kind !== 'event') throw new Error(`not an event of the protocol: ${event.data}`)
      this.pending.push(queued.event)
    },
  })
  ended = false

  constructor(readonly response: Response) {
    if (!response.body) throw new Error('no body')
    this.reader = response.body.getReader()
  }

  async next(): Promise<StreamEvent | undefined> {
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

  async until<T extends StreamEvent['type']>(type: T): Promise<Extract<StreamEvent, { type: T }>> {
    for (;;) {
      const event = await this.next()
      if (!event)
        throw new Error(`stream ended before ${type}; read ${JSON.stringify(this.events)}`)
      if (event.type === type) return event as Extract<StreamEvent, { type: T }>
    }
  }

  async rest(): Promise<StreamEvent[]> {
    while (await this.next());
    return this.events
  }

  /** The types read so far, in order. */
  get types(): string[] {
    return this.events.map((event) => event.type)
  }
}

export async function queueChat(
  server: PreviewChatServer,
  body: { message: string; sessionId?: string; newSession?: true; messageId?: string },
  user = 'alice',
): Promise<QueueStream> {
  const response = await post(server, chatPath, body, user)
  if (response.status !== 200) throw new Error(`chat answered ${response.status}`)
  return new QueueStream(response)
}

/** One REST call; its status and parsed JSON body. */
export async function call(
  server: PreviewChatServer,
  method: 'GET' | 'PATCH' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  user = 'alice',
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...authHeaders(user) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  return { status: response.status, body: (await response.json()) as unknown }
}

/** One push connection over WebSocket, keeping execution and queue messages alike. */
export async function openQueuePush(server: PreviewChatServer, user = 'alice') {
  const messages: ServerPushMessage[] = []
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/rest/push`, {
    headers: authHeaders(user),
  })
  socket.on('message', (data: Buffer) => {
    const text = data.toString('utf8')
    const execution = parsePushMessage(text)
    if (execution.kind === 'message') return void messages.push(execution.message)
    const queue = parseQueuePushMessage(text)
    if (queue.kind === 'message') messages.push(queue.message)
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  return { messages, close: () => socket.close() }
}
