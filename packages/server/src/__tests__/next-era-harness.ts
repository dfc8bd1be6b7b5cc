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
import { authHeaders, chatPath, post, startHost, StreamReader } from './harness'

/** Clients of the next-era flavor: its turn streams carry queue events beside the turn's. */

export type StreamEvent = TurnEvent | QueueTurnEvent

export const startQueueHost = (options: Parameters<typeof startHost>[0] = {}) =>
  startHost({ flavor: 'next-era', ...options })

export const queuePath = (threadId: string, queueId?: string, action?: 'reorder' | 'steer') =>
  `${chatPath}/${threadId}/queue${queueId === undefined ? '' : `/${queueId}`}${action ? `/${action}` : ''}`

/**
 * One `data:` block as a queue-aware client reads it: `queueEventFrom` first (the queue's events,
 * and `execution-started` with its `inputMessageIds`), then `turnEventFrom`; throws on the rest.
 */
function streamEventOf(data: string): StreamEvent {
  const raw: unknown = JSON.parse(data)
  const queued = queueEventFrom(raw)
  if (queued.kind === 'event') return queued.event
  const turn = turnEventFrom(raw)
  if (turn.kind !== 'event') throw new Error(`not an event of the protocol: ${data}`)
  return turn.event
}

/** A chat POST's stream, each event parsed by core's parsers (turn events, then queue events). */
export class QueueStream extends StreamReader<StreamEvent> {
  constructor(response: Response) {
    super(response, streamEventOf)
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
