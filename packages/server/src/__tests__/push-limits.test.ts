import type { PushMessage } from '@preview-chat/core/contract'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { createPreviewChatBackend } from '../backend'
import { pushQueueLimitBytes } from '../sse'
import { authHeaders, closeHosts, manualTimers, startHost, waitFor } from './harness'

// A push client that does not read, or a dead peer, must not make the server buffer without limit:
// push messages carry no transcript, so such a client is dropped (it reads history when back).
afterEach(closeHosts)

/** A push message of about `bytes` bytes (its ids are long). */
function bulky(bytes: number): PushMessage {
  return {
    type: 'agentExecutionUpdated',
    data: { projectId: 'p1', agentId: 'a1', threadId: 't'.repeat(bytes), executionId: 'e1' },
  } as PushMessage
}

async function openSocket(url: string, options: { autoPong?: boolean } = {}) {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/rest/push`, {
    headers: authHeaders('alice'),
    ...options,
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  const closed = new Promise<number>((resolve) => socket.once('close', resolve))
  return { socket, closed }
}

/** The client's own ping answered: every frame it sent before has reached the server. */
const roundTrip = (socket: WebSocket) =>
  new Promise<void>((resolve) => {
    socket.once('pong', () => resolve())
    socket.ping()
  })

describe('a push client that does not keep up is dropped, not buffered for [R-SERVER-PUSH-SLOW]', () => {
  it('errors an SSE push stream once more than pushQueueLimitBytes wait unread, and unsubscribes it', async () => {
    const backend = createPreviewChatBackend({ dev: true })
    const response = await backend.fetch(
      new Request('http://x/rest/push', {
        headers: { ...authHeaders('alice'), Accept: 'text/event-stream' },
      }),
    )
    expect(response.status).toBe(200)
    expect(backend.inspect.pushConnections('alice')).toBe(1)
    const message = bulky(16 * 1024)
    for (let sent = 0; sent <= 2 * pushQueueLimitBytes; sent += 16 * 1024) {
      void backend.bus.publish('alice', message)
    }
    expect(backend.inspect.pushConnections('alice')).toBe(0)
    await expect(response.body!.getReader().read()).rejects.toThrow(/unread/)
    await backend.close()
  })

  it('terminates a WebSocket whose peer does not read once its buffer passes the limit', async () => {
    const server = await startHost()
    const { socket, closed } = await openSocket(server.url)
    // The peer stops reading: what the server sends piles up in its socket's buffer.
    ;(socket as unknown as { _socket: { pause(): void } })._socket.pause()
    const message = bulky(64 * 1024)
    await waitFor(async () => {
      for (let i = 0; i < 16; i++) void server.backend.bus.publish('alice', message)
      await new Promise((resolve) => setTimeout(resolve, 5))
      return server.backend.inspect.pushConnections('alice') === 0
    }, 'the server to drop the connection')
    socket.terminate()
    await closed
  })

  it('pings each WebSocket and terminates one that has not answered by the next ping', async () => {
    const clock = manualTimers()
    const server = await startHost({ timers: clock.timers, pingMs: 1000 })
    const live = await openSocket(server.url)
    const dead = await openSocket(server.url, { autoPong: false })
    expect(server.backend.inspect.pushConnections('alice')).toBe(2)
    const pinged = [live, dead].map(
      ({ socket }) => new Promise((resolve) => socket.once('ping', resolve)),
    )
    clock.fire()
    await Promise.all(pinged)
    // The live peer's pong went out before this ping, so the server has it once this is answered.
    await roundTrip(live.socket)
    clock.fire()
    expect(await dead.closed).toBe(1006)
    await waitFor(
      () => server.backend.inspect.pushConnections('alice') === 1,
      'the dead peer dropped',
    )
    expect(live.socket.readyState).toBe(WebSocket.OPEN)
    live.socket.close()
  })
})
