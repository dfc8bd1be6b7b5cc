import { afterEach, describe, expect, it } from 'vitest'
import type { PreviewChatServer, StartPreviewChatServerOptions } from '../node/host'
import type { PreviewChatUser } from '../users'
import { closeHosts, collectUnhandled, send, startHost, upgradeHeaders } from './harness'
import { n8nPushSocket } from './n8n-harness'

// Issue 27, row j: every push channel of every flavor admits a user through one check
// (`admitPushUser`: a known user with agent:read). The n8n-2.41 flavor's WebSocket used to let a
// user without the scope in, while its SSE push and the spec flavor refused them with 403.
const unhandled = collectUnhandled()
afterEach(async () => {
  await closeHosts()
  expect(unhandled).toEqual([])
})

const users: Record<string, PreviewChatUser> = {
  // May post and stop, but not read: a push message only ever leads to a read.
  dave: { id: 'dave', scopes: ['agent:execute'] },
  carol: { id: 'carol', scopes: ['agent:read'] },
}

type Outcome = number | 'open' | `closed ${number}` | 'dropped'

/** An SSE push request: its status (a 200 is left at its first chunk). */
async function sse(server: PreviewChatServer, path: string, headers: Record<string, string>) {
  const answer = await send(server, {
    path,
    headers: { Accept: 'text/event-stream', ...headers },
    untilFirstChunk: true,
  })
  return answer.status
}

/** A WebSocket to the n8n flavor's push: open, closed right after the handshake, or dropped. */
async function n8nSocket(server: PreviewChatServer, user: string): Promise<Outcome> {
  const socket = n8nPushSocket(server, '?pushRef=r', { Cookie: `n8n-auth=${user}` })
  const opened = await new Promise<boolean>((resolve) => {
    socket.socket.once('open', () => resolve(true))
    socket.socket.once('close', () => resolve(false))
  })
  if (opened && socket.socket.readyState === socket.socket.OPEN) {
    // Accepted unless a close follows the handshake at once: a push round trip tells them apart.
    const pong = await new Promise<boolean>((resolve) => {
      socket.socket.once('pong', () => resolve(true))
      socket.socket.once('close', () => resolve(false))
      socket.socket.ping()
    })
    if (pong) {
      socket.socket.close()
      return 'open'
    }
  }
  const { opened: handshook, code } = await socket
  return handshook ? `closed ${code}` : 'dropped'
}

interface Channel {
  name: string
  options: StartPreviewChatServerOptions
  open(server: PreviewChatServer, user: string): Promise<Outcome>
  /** What a user without agent:read gets, and what one with it gets. */
  refused: Outcome
  admitted: Outcome
}

const channels: Channel[] = [
  {
    name: 'spec flavor, SSE',
    options: {},
    open: (server, user) => sse(server, '/rest/push', { Authorization: `Bearer ${user}` }),
    refused: 403,
    admitted: 200,
  },
  {
    name: 'spec flavor, WebSocket',
    options: {},
    open: async (server, user) =>
      (
        await send(server, {
          path: '/rest/push',
          headers: { ...upgradeHeaders, Authorization: `Bearer ${user}` },
        })
      ).status,
    refused: 403,
    admitted: 101,
  },
  {
    name: 'n8n-2.41 flavor, pushBackend sse, SSE',
    options: { flavor: 'n8n-2.41', pushBackend: 'sse' },
    open: (server, user) => sse(server, '/rest/push?pushRef=r', { Cookie: `n8n-auth=${user}` }),
    refused: 403,
    admitted: 200,
  },
  {
    // n8n completes the handshake, then closes on any refusal without a status (1005).
    name: 'n8n-2.41 flavor, pushBackend websocket, WebSocket',
    options: { flavor: 'n8n-2.41', pushBackend: 'websocket' },
    open: n8nSocket,
    refused: 'closed 1005',
    admitted: 'open',
  },
  {
    // No channel there: the scope is refused first, then n8n's 401 of a request that is no WebSocket.
    name: 'n8n-2.41 flavor, pushBackend websocket, plain GET',
    options: { flavor: 'n8n-2.41', pushBackend: 'websocket' },
    open: (server, user) => sse(server, '/rest/push?pushRef=r', { Cookie: `n8n-auth=${user}` }),
    refused: 403,
    admitted: 401,
  },
  {
    name: 'n8n-2.41 flavor, pushBackend sse, WebSocket (none served)',
    options: { flavor: 'n8n-2.41', pushBackend: 'sse' },
    open: n8nSocket,
    refused: 'dropped',
    admitted: 'dropped',
  },
]

describe('every push channel admits a user through one scope check [R-SERVER-PUSH-SCOPE]', () => {
  it.each(channels)(
    '$name: a user without agent:read is refused and subscribes nothing',
    async (channel) => {
      const server = await startHost({ ...channel.options, users })
      expect(await channel.open(server, 'dave')).toBe(channel.refused)
      expect(server.backend.inspect.pushConnections('dave')).toBe(0)
      expect(await channel.open(server, 'carol')).toBe(channel.admitted)
    },
  )
})
