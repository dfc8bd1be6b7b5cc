import { parsePushMessage, type PushMessage } from '@preview-chat/core/contract'
import { readSse } from '@preview-chat/core/internal'
import { WebSocket } from 'ws'
import type { PreviewChatServer, StartPreviewChatServerOptions } from '../node/host'
import { chatPath, send, startHost, TurnReader, type Answer } from './harness'

/** Clients of the n8n-2.41 flavor, over real HTTP against the Node host (see `harness.ts`). */

/** n8n's execution ids: 16 letters and digits (`mAaZcGyePtNFWPef`). */
export const n8nExecutionId = /^[A-Za-z0-9]{16}$/

export const startN8nHost = (options: StartPreviewChatServerOptions = {}) =>
  startHost({ flavor: 'n8n-2.41', ...options })

/** n8n's credentials: the `n8n-auth` cookie (a user name, in the emulation) and a `browser-id`. */
export function n8nAuth(user: string | null = 'alice'): Record<string, string> {
  return user === null ? {} : { Cookie: `n8n-auth=${user}`, 'browser-id': 'test-browser-id' }
}

/** `POST …/chat` as a stream, as n8n's own frontend sends it (no Accept needed). */
export async function n8nTurn(
  server: PreviewChatServer,
  body: unknown,
  options: { user?: string; signal?: AbortSignal; path?: string } = {},
): Promise<TurnReader> {
  const response = await fetch(`${server.url}${options.path ?? chatPath}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...n8nAuth(options.user ?? 'alice') },
    body: JSON.stringify(body),
    ...(options.signal && { signal: options.signal }),
  })
  if (response.status !== 200) throw new Error(`turn answered ${response.status}`)
  return new TurnReader(response)
}

/** One request with n8n's credentials (or those given), through `node:http`. */
export function n8nSend(
  server: PreviewChatServer,
  options: { method?: string; path: string; body?: unknown; headers?: Record<string, string> },
): Promise<Answer> {
  return send(server, {
    method: options.method ?? 'GET',
    path: options.path,
    headers: {
      ...(options.body !== undefined && { 'Content-Type': 'application/json' }),
      ...(options.headers ?? n8nAuth()),
    },
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
  })
}

export const historyPath = (threadId: string, path = chatPath) => `${path}/${threadId}/messages`

/** A history read: the status and the parsed JSON body. */
export async function n8nHistory(
  server: PreviewChatServer,
  threadId: string,
  path = chatPath,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await n8nSend(server, { path: historyPath(threadId, path) })
  return { status: answer.status, body: JSON.parse(answer.body) as Record<string, unknown> }
}

/** The messages of a successful history read, as plain records (n8n's shape is not core's). */
export async function n8nMessages(
  server: PreviewChatServer,
  threadId: string,
  path = chatPath,
): Promise<Record<string, unknown>[]> {
  const { status, body } = await n8nHistory(server, threadId, path)
  if (status !== 200) throw new Error(`history read answered ${status}: ${JSON.stringify(body)}`)
  return (body.data as { messages: Record<string, unknown>[] }).messages
}

/**
 * The SSE push channel: its body's text as it came (for the framing checks), and its messages as
 * the client reads them (core's SSE reader).
 */
export async function openN8nPushStream(server: PreviewChatServer, user = 'alice') {
  const controller = new AbortController()
  const response = await fetch(`${server.url}/rest/push?pushRef=test-push-ref`, {
    headers: { Cookie: `n8n-auth=${user}` },
    signal: controller.signal,
  })
  if (response.status !== 200) throw new Error(`push answered ${response.status}`)
  const [raw, read] = (response.body as ReadableStream<Uint8Array>).tee()
  let text = ''
  const messages: PushMessage[] = []
  const decoder = new TextDecoder()
  const write = (chunk: Uint8Array) => void (text += decoder.decode(chunk, { stream: true }))
  void raw.pipeTo(new WritableStream({ write })).catch(() => undefined)
  void readSse(
    read,
    (data) => {
      for (const each of data) {
        const parsed = parsePushMessage(each)
        if (parsed.kind === 'message') messages.push(parsed.message)
      }
      return true
    },
    controller.signal,
  )
  return { response, text: () => text, messages, close: () => controller.abort() }
}

/** How a WebSocket to the push channel went: opened or not, its text frames, its close code. */
export function n8nPushSocket(
  server: PreviewChatServer,
  query: string,
  headers: Record<string, string> = { Cookie: 'n8n-auth=alice' },
): Promise<{ opened: boolean; texts: string[]; code: number; messages: PushMessage[] }> & {
  socket: WebSocket
} {
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/rest/push${query}`, {
    headers,
  })
  let opened = false
  const texts: string[] = []
  const messages: PushMessage[] = []
  socket.on('open', () => (opened = true))
  socket.on('message', (data: Buffer) => {
    const text = data.toString('utf8')
    texts.push(text)
    const parsed = parsePushMessage(text)
    if (parsed.kind === 'message') messages.push(parsed.message)
  })
  socket.on('error', () => undefined)
  const closed = new Promise<{
    opened: boolean
    texts: string[]
    code: number
    messages: PushMessage[]
  }>((resolve) => socket.on('close', (code) => resolve({ opened, texts, code, messages })))
  return Object.assign(closed, { socket })
}
