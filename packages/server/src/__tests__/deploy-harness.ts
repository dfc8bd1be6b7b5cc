/**
 * What the `*.deploy.test.ts` files share besides the processes (`deploy-processes.ts`): clients
 * of one instance, polling, a push stream.
 */
import {
  parsePushMessage,
  type HistorySnapshot,
  type PushMessage,
} from '@preview-chat/core/contract'
import { expect, vi } from 'vitest'
import type { PreviewChatServer } from '../node/host'
import { authHeaders, StreamReader } from './harness'

export { startDeployment, type Deployment, type Instance } from './deploy-processes'

/** A URL as the harness's helpers take a server (they read `url` only). */
export const at = (url: string) => ({ url }) as PreviewChatServer

/** Polls `check` until it passes: generous bounds, never a duration asserted. */
export const eventually = <T>(check: () => T | Promise<T>, timeout = 30_000) =>
  vi.waitFor(check, { timeout, interval: 50 })

/** The text of a snapshot's assistant messages, joined. */
export function assistantText(snapshot: HistorySnapshot): string {
  return snapshot.messages
    .filter((message) => message.role === 'assistant')
    .flatMap((message) => message.content)
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('')
}

/** A user's push stream on one instance (SSE), collecting its messages. */
export async function pushAt(url: string, user = 'alice') {
  const controller = new AbortController()
  const response = await fetch(
    `${url}/rest/push?pushRef=deploy-${Math.random().toString(36).slice(2, 8)}`,
    {
      headers: { ...authHeaders(user), Accept: 'text/event-stream' },
      signal: controller.signal,
    },
  )
  expect(response.status).toBe(200)
  const reader = new StreamReader<PushMessage>(response, (data) => {
    const parsed = parsePushMessage(data)
    if (parsed.kind !== 'message') throw new Error(`invalid push message: ${data}`)
    return parsed.message
  })
  void reader.rest().catch(() => undefined)
  const heard = (executionId: string) =>
    reader.events.filter(
      (message) =>
        message.type === 'agentExecutionUpdated' && message.data.executionId === executionId,
    ).length
  return { heard, close: () => controller.abort() }
}
