// CORS (issue 12): a page served from one origin calls the reference server on another, as an app
// on its own dev server does when the server runs with `--cors <origin>`.
import { createServer } from 'node:http'
import type { Browser } from '@playwright/test'
import type { AddressInfo } from 'node:net'
import { startPreviewChatServer, type PreviewChatServer } from '@preview-chat/server/node'
import { expect, test } from './fixtures'

interface PageOrigin {
  url: string
  close(): Promise<void>
}

/** An origin of its own (a loopback port) that serves one empty page. */
async function startPageOrigin(): Promise<PageOrigin> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><title>another origin</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

let allowed: PageOrigin
let stranger: PageOrigin
let api: PreviewChatServer

test.beforeAll(async () => {
  allowed = await startPageOrigin()
  stranger = await startPageOrigin()
  api = await startPreviewChatServer({
    dev: true,
    port: 0,
    deltaMs: 5,
    snapshotMs: 50,
    cors: allowed.url,
  })
})

test.afterAll(async () => {
  await api.close()
  await allowed.close()
  await stranger.close()
})

/** A browser page on `origin` whose cookie names alice on the API's origin. */
async function pageOn(browser: Browser, origin: PageOrigin) {
  const context = await browser.newContext()
  await context.addCookies([{ name: 'preview-chat-user', value: 'alice', url: api.url }])
  const page = await context.newPage()
  await page.goto(origin.url)
  return { page, close: () => context.close() }
}

test('a page on the allowed origin streams a turn, hears the push, reads history and error answers [R-SERVER-CORS R-WIRE-CREDENTIALS]', async ({
  browser,
}) => {
  const { page, close } = await pageOn(browser, allowed)
  const result = await page.evaluate(async (base) => {
    const chat = `${base}/projects/p/agents/v2/a/chat`
    // The push channel as SSE, authenticated by the cookie (credentials).
    const source = new EventSource(`${base}/push`, { withCredentials: true })
    await new Promise((resolve, reject) => {
      source.onopen = resolve
      source.onerror = () => reject(new Error('the push stream did not open'))
    })
    const pushed = new Promise<unknown>((resolve) => {
      source.onmessage = (event: MessageEvent<string>) => resolve(JSON.parse(event.data))
    })
    // Authorization and a JSON Content-Type: the browser sends a preflight first.
    const turn = await fetch(chat, {
      method: 'POST',
      headers: { Authorization: 'Bearer alice', 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'hello across origins', sessionId: 'c1', newSession: true }),
    })
    const stream = await turn.text()
    const announcement = await pushed
    source.close()
    const read = await fetch(`${chat}/c1/messages`, { credentials: 'include' })
    const history = (await read.json()) as { data: { messages: { role: string }[] } }
    // Without credentials the cookie stays home: a 401 whose JSON body the page can read.
    const refused = await fetch(`${chat}/c1/messages`)
    return {
      turn: { status: turn.status, done: stream.includes('"type":"done"') },
      announcement,
      read: { status: read.status, roles: history.data.messages.map((message) => message.role) },
      refused: { status: refused.status, body: (await refused.json()) as unknown },
    }
  }, `${api.url}/rest`)

  expect(result).toEqual({
    turn: { status: 200, done: true },
    announcement: {
      type: 'agentExecutionUpdated',
      data: { projectId: 'p', agentId: 'a', threadId: 'c1', executionId: expect.any(String) },
    },
    read: { status: 200, roles: ['user', 'assistant'] },
    refused: {
      status: 401,
      body: { code: 'unauthorized', message: expect.any(String), hint: expect.any(String) },
    },
  })
  expect(api.backend.inspect.countRequests({ route: 'chat', method: 'OPTIONS' })).toBe(1)
  await close()
})

test('a page on another origin is refused by the browser [R-SERVER-CORS]', async ({ browser }) => {
  const { page, close } = await pageOn(browser, stranger)
  const outcome = await page.evaluate(async (base) => {
    try {
      await fetch(`${base}/projects/p/agents/v2/a/chat/c1/messages`, { credentials: 'include' })
      return 'read'
    } catch (error) {
      return error instanceof TypeError ? 'blocked' : String(error)
    }
  }, `${api.url}/rest`)
  expect(outcome).toBe('blocked')
  await close()
})

test('the push WebSocket opens for a page on the allowed origin, and not for a page on another [R-SERVER-PUSH-ORIGIN]', async ({
  browser,
}) => {
  // Both pages are on the API's site (loopback, other ports): the browser sends alice's cookie with
  // either upgrade, and CORS does not apply to WebSockets. The server's Origin check decides.
  const dial = async (origin: PageOrigin) => {
    const { page, close } = await pageOn(browser, origin)
    const outcome = await page.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const socket = new WebSocket(url)
          socket.onopen = () => {
            resolve('open')
            socket.close()
          }
          socket.onclose = () => resolve('refused')
        }),
      `${api.url.replace('http', 'ws')}/rest/push`,
    )
    await close()
    return outcome
  }
  expect(await dial(allowed)).toBe('open')
  expect(await dial(stranger)).toBe('refused')
})
