import { networkInterfaces } from 'node:os'
import { parsePushMessage, type PushMessage } from '@preview-chat/core/contract'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import type { PreviewChatServer } from '../node/host'
import {
  chat,
  closeHosts,
  collectUnhandled,
  errorBodyOf,
  openPushSocket,
  send,
  startHost,
  turn,
  upgradeHeaders,
  waitFor,
} from './harness'
import { n8nPushSocket, n8nTurn, startN8nHost } from './n8n-harness'

// Cross-site WebSocket hijacking: a browser sends the user's cookie with a WebSocket upgrade from
// any page, and CORS does not cover WebSockets. The push socket checks the page's Origin instead.
const unhandled = collectUnhandled()
afterEach(closeHosts)

const stranger = 'http://evil.example'
const devServer = 'http://localhost:5173'

/** How an upgrade to the push channel went: refused (status, body) or open (its messages). */
interface Dialled {
  status: number
  body: string
  messages: PushMessage[]
  close(): void
}

/** A browser-like WebSocket to `/rest/push` with alice's cookie and these headers. */
function dial(server: PreviewChatServer, headers: Record<string, string>): Promise<Dialled> {
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/rest/push`, {
    headers: { Cookie: 'preview-chat-user=alice', ...headers },
  })
  const messages: PushMessage[] = []
  socket.on('message', (data: Buffer) => {
    const parsed = parsePushMessage(data.toString('utf8'))
    if (parsed.kind === 'message') messages.push(parsed.message)
  })
  const close = () => socket.terminate()
  return new Promise((resolve, reject) => {
    socket.on('error', reject)
    socket.once('open', () => resolve({ status: 101, body: '', messages, close }))
    socket.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          messages,
          close,
        })
        close()
      })
    })
  })
}

/** Runs one turn of alice's; resolves once `witness` (an accepted socket) has heard its end. */
async function pushOneTurn(server: PreviewChatServer, witness: { messages: PushMessage[] }) {
  await (await turn(chat(server, { message: '/words 2' }))).rest()
  await waitFor(() => witness.messages.length >= 2, 'the push of the turn')
}

/** The 403 of a refused origin, as JSON, saying what to do. */
function expectOriginRefused(answer: Dialled) {
  expect(answer.status).toBe(403)
  const body = errorBodyOf({ headers: { 'content-type': 'application/json' }, body: answer.body })
  expect(body.code).toBe('origin_not_allowed')
  expect(`${body.message} ${body.hint}`).toContain('--cors')
  expect(answer.messages).toEqual([])
}

describe('the push WebSocket checks the Origin of a browser page [R-SERVER-PUSH-ORIGIN]', () => {
  it('refuses a page of another site with a 403 JSON error, and pushes nothing to it', async () => {
    const server = await startHost()
    const refused = await dial(server, { Origin: stranger })
    expectOriginRefused(refused)
    const witness = await openPushSocket(server, 'alice')
    await pushOneTurn(server, witness)
    expect(refused.messages).toEqual([])
    expect(server.backend.inspect.pushConnections('alice')).toBe(1)
    witness.close()
    expect(unhandled).toEqual([])
  })

  it("accepts a page of the server's own origin, as the browser reached it", async () => {
    const server = await startHost()
    // Directly: Origin http://127.0.0.1:<port>, Host 127.0.0.1:<port>.
    const direct = await dial(server, { Origin: server.url })
    // Through a dev proxy (Vite's in `pnpm demo`), which forwards the Host the browser sent.
    const proxied = await dial(server, { Origin: devServer, Host: 'localhost:5173' })
    expect([direct.status, proxied.status]).toEqual([101, 101])
    await pushOneTurn(server, direct)
    await waitFor(() => proxied.messages.length >= 2, 'the push through the proxy')
    direct.close()
    proxied.close()
  })

  it('accepts the origin of the cors option, and only that one', async () => {
    const server = await startHost({ cors: devServer })
    const allowed = await dial(server, { Origin: devServer })
    expect(allowed.status).toBe(101)
    await pushOneTurn(server, allowed)
    allowed.close()
    expectOriginRefused(await dial(server, { Origin: 'http://localhost:5174' }))
    expectOriginRefused(await dial(server, { Origin: stranger }))
  })

  it("refuses another site under cors '*', which allows no cookies (a WebSocket always sends them)", async () => {
    const server = await startHost({ cors: '*' })
    const refused = await dial(server, { Origin: stranger })
    expectOriginRefused(refused)
    expect(refused.body).toContain('*')
    expect((await dial(server, { Origin: server.url })).status).toBe(101)
  })

  it('accepts a request without Origin (curl, a test, a server: no page sent it)', async () => {
    const server = await startHost()
    const socket = await dial(server, {})
    expect(socket.status).toBe(101)
    await pushOneTurn(server, socket)
    socket.close()
  })

  it('refuses Origin: null (a sandboxed page, a file) and garbage, and goes on serving', async () => {
    const server = await startHost()
    const own = server.url
    const origins: (string | string[])[] = [
      'null',
      '',
      ' ',
      'garbage',
      'http://',
      '*',
      `${own}/`,
      `${own}/rest/push`,
      `${own}@evil.example`,
      `http://user@127.0.0.1:${server.port}`,
      'file://',
      'chrome-extension://abcdef',
      '\u00ff\u00fe%00',
      'x'.repeat(8000),
      [own, stranger],
      [stranger, own],
      [own, own],
    ]
    for (const origin of origins) {
      const answer = await send(server, {
        path: '/rest/push',
        headers: {
          ...upgradeHeaders,
          Cookie: 'preview-chat-user=alice',
          Origin: origin as string,
        },
      })
      expect(answer.status, JSON.stringify(origin).slice(0, 80)).toBe(403)
      expect(errorBodyOf(answer)).toMatchObject({ code: 'origin_not_allowed' })
    }
    expect(server.backend.inspect.pushConnections('alice')).toBe(0)
    const after = await send(server, {
      path: '/rest/push',
      headers: { ...upgradeHeaders, Cookie: 'preview-chat-user=alice', Origin: own },
    })
    expect(after.status).toBe(101)
    expect(unhandled).toEqual([])
  })
})

// Issue 19, row l: the Origin must be this server's own, not merely agree with the Host.
describe("the server's own origin is its scheme and its own names (issue 19, l) [R-SERVER-PUSH-ORIGIN]", () => {
  /** An address of this machine's that is not loopback (undefined on a machine with none). */
  const lanAddress = Object.values(networkInterfaces())
    .flat()
    .find((address) => address?.family === 'IPv4' && !address.internal)?.address

  it('refuses an https page on a plain-http server, though its host is the Host', async () => {
    const server = await startHost()
    const host = `127.0.0.1:${server.port}`
    expectOriginRefused(await dial(server, { Origin: `https://${host}`, Host: host }))
    expectOriginRefused(
      await dial(server, { Origin: 'https://localhost:5173', Host: 'localhost:5173' }),
    )
    expect((await dial(server, { Origin: `http://${host}`, Host: host })).status).toBe(101)
  })

  it('refuses a page of a name rebound to this server (Host: evil.example, Origin: http://evil.example)', async () => {
    const server = await startHost()
    for (const host of ['evil.example', `evil.example:${server.port}`, 'localhost.evil.example']) {
      const refused = await dial(server, { Origin: `http://${host}`, Host: host })
      expectOriginRefused(refused)
    }
    const witness = await openPushSocket(server, 'alice')
    await pushOneTurn(server, witness)
    expect(server.backend.inspect.pushConnections('alice')).toBe(1)
    witness.close()
    expect(unhandled).toEqual([])
  })

  it('accepts loopback names and addresses, through a proxy that forwards the Host too', async () => {
    const server = await startHost()
    for (const host of [
      'localhost:5173',
      `localhost:${server.port}`,
      'app.localhost:5173',
      `127.0.0.2:${server.port}`,
      `[::1]:${server.port}`,
    ]) {
      const socket = await dial(server, { Origin: `http://${host}`, Host: host })
      expect(socket.status, host).toBe(101)
      socket.close()
    }
  })

  it('accepts the names of the allowedHosts option (a leading dot: and their subdomains)', async () => {
    const server = await startHost({ allowedHosts: ['chat.example', '.corp.example'] })
    for (const host of ['chat.example', 'chat.example:8080', 'corp.example', 'a.b.corp.example']) {
      const socket = await dial(server, { Origin: `http://${host}`, Host: host })
      expect(socket.status, host).toBe(101)
      socket.close()
    }
    for (const host of ['evil.example', 'xcorp.example', 'chat.example.evil.example']) {
      expectOriginRefused(await dial(server, { Origin: `http://${host}`, Host: host }))
    }
    await expect(startHost({ allowedHosts: ['http://chat.example'] })).rejects.toThrow(TypeError)
  })

  it('still accepts the cors origin, whatever its scheme and name', async () => {
    const server = await startHost({ cors: 'https://app.example' })
    const socket = await dial(server, { Origin: 'https://app.example' })
    expect(socket.status).toBe(101)
    socket.close()
  })

  it.skipIf(lanAddress === undefined)(
    'accepts the address it is bound to, and refuses a rebound name there',
    async () => {
      const server = await startHost({ host: lanAddress })
      const host = `${lanAddress}:${server.port}`
      const own = await dial(server, { Origin: `http://${host}` })
      expect(own.status).toBe(101)
      own.close()
      expectOriginRefused(
        await dial(server, { Origin: 'http://evil.example', Host: 'evil.example' }),
      )
    },
  )
})

describe("the n8n-2.41 flavor's WebSocket push checks the Origin as n8n does [R-SERVER-PUSH-ORIGIN R-N8N-EMULATION]", () => {
  const alice = { Cookie: 'n8n-auth=alice' }

  it("a page of another site: the handshake completes, then 'Invalid origin!' and 1008, no push", async () => {
    const server = await startN8nHost({ pushBackend: 'websocket' })
    const witness = n8nPushSocket(server, '?pushRef=w')
    const refused = await n8nPushSocket(server, '?pushRef=x', { ...alice, Origin: stranger })
    expect(refused).toMatchObject({ opened: true, code: 1008, texts: ['Invalid origin!'] })
    await waitFor(() => server.backend.inspect.pushConnections('alice') === 1, 'the witness')
    await (await n8nTurn(server, { message: '/words 2', sessionId: 's' })).rest()
    await waitFor(() => witness.socket.readyState === witness.socket.OPEN, 'the witness open')
    witness.socket.close()
    expect((await witness).messages.length).toBeGreaterThanOrEqual(2)
    expect(refused.messages).toEqual([])
    expect(unhandled).toEqual([])
  })

  it('accepts its own origin (also through a proxy), the cors origin and no Origin; refuses null and garbage', async () => {
    const server = await startN8nHost({ pushBackend: 'websocket', cors: devServer })
    const accepted = [
      { ...alice, Origin: server.url },
      { ...alice, Origin: 'http://localhost:8080', Host: 'localhost:8080' },
      { ...alice, Origin: devServer },
      alice,
    ]
    for (const headers of accepted) {
      const socket = n8nPushSocket(server, '?pushRef=ok', headers)
      await waitFor(() => socket.socket.readyState === socket.socket.OPEN, 'the socket to open')
      await waitFor(() => server.backend.inspect.pushConnections('alice') === 1, 'the subscription')
      socket.socket.close()
      expect(await socket, JSON.stringify(headers)).toMatchObject({ opened: true, texts: [] })
      await waitFor(
        () => server.backend.inspect.pushConnections('alice') === 0,
        'the unsubscription',
      )
    }
    for (const origin of ['null', 'garbage', stranger, `${server.url}/`, 'x'.repeat(8000)]) {
      expect(
        await n8nPushSocket(server, '?pushRef=x', { ...alice, Origin: origin }),
        origin.slice(0, 80),
      ).toMatchObject({ opened: true, code: 1008, texts: ['Invalid origin!'] })
    }
    // n8n authenticates before it looks at the origin: no user is still a close without status.
    expect(await n8nPushSocket(server, '?pushRef=x', { Origin: stranger })).toMatchObject({
      opened: true,
      code: 1005,
      texts: [],
    })
    expect(server.backend.inspect.pushConnections('alice')).toBe(0)
    expect(unhandled).toEqual([])
  })

  it("refuses another scheme and a rebound name with 'Invalid origin!' and 1008 too (issue 19, l)", async () => {
    const server = await startN8nHost({ pushBackend: 'websocket' })
    const own = `127.0.0.1:${server.port}`
    for (const [origin, host] of [
      [`https://${own}`, own],
      ['http://evil.example', 'evil.example'],
    ] as const) {
      expect(
        await n8nPushSocket(server, '?pushRef=x', { ...alice, Origin: origin, Host: host }),
        origin,
      ).toMatchObject({ opened: true, code: 1008, texts: ['Invalid origin!'] })
    }
    expect(server.backend.inspect.pushConnections('alice')).toBe(0)
    expect(unhandled).toEqual([])
  })
})
