import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener, serve } from '@hono/node-server'
import {
  parseHistorySnapshot,
  parsePushMessage,
  type PushMessage,
} from '@preview-chat/core/contract'
import { Hono } from 'hono'
import { createStaticHandler } from 'react-router'
import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend, type PreviewChatBackend } from '../backend'
import { chatPath, createGate, StreamReader, TurnReader, waitFor } from './harness'

/**
 * The kit is a `(Request) => Response` handler: the same contract wherever an app mounts it. Each
 * host below is the real framework (Hono with its Node adapter; React Router's own request
 * handling of a resource route's loader and action), served over HTTP on loopback, and the same
 * scenario runs through it: a turn streams, a read shows it active, push over SSE announces it, a
 * Stop from another request cancels it and the record says so, another user cannot see it.
 */

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

function newBackend() {
  const gate = createGate()
  const backend = createPreviewChatBackend({
    dev: true,
    deltaMs: 0,
    snapshotMs: 5,
    sleep: gate.sleep,
  })
  closers.push(() => backend.close())
  return { backend, gate }
}

function listen(server: Server): Promise<string> {
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  )
}

/** Hono, as its docs mount a Fetch handler: `app.all('/rest/*', (c) => handler(c.req.raw))`. */
async function mountInHono(backend: PreviewChatBackend): Promise<string> {
  const app = new Hono()
  app.all('/rest/*', (c) => backend.fetch(c.req.raw))
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve(`http://127.0.0.1:${info.port}`),
    )
    closers.push(
      () =>
        new Promise<void>((done) => {
          if ('closeAllConnections' in server) server.closeAllConnections()
          server.close(() => done())
        }),
    )
  })
}

/**
 * A React Router 7 resource route (`app/routes/rest.$.ts`: `export const loader = ({ request }) =>
 * backend.fetch(request)`, and `action` the same), answered by React Router's own handler of data
 * requests, as its server runtime answers a resource route.
 */
async function mountInReactRouter(backend: PreviewChatBackend): Promise<string> {
  const forward = ({ request }: { request: Request }) => backend.fetch(request)
  const handler = createStaticHandler([{ path: '/rest/*', loader: forward, action: forward }])
  const answer = async (request: Request) => {
    const response = await handler.queryRoute(request)
    if (!(response instanceof Response)) throw new Error('a resource route answers a Response')
    return response
  }
  return listen(createServer(getRequestListener(answer)))
}

const as = (user: string) => ({ Authorization: `Bearer ${user}` })

async function scenario(base: string, gate: ReturnType<typeof createGate>) {
  const leave = new AbortController()
  const push = new StreamReader<PushMessage>(
    await fetch(`${base}/rest/push`, {
      headers: { Accept: 'text/event-stream', ...as('alice') },
      signal: leave.signal,
    }),
    (data) => {
      const parsed = parsePushMessage(data)
      if (parsed.kind !== 'message') throw new Error(`invalid push message: ${data}`)
      return parsed.message
    },
  )
  const posted = await fetch(`${base}${chatPath}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...as('alice') },
    body: JSON.stringify({ message: '/long 100' }),
  })
  expect(posted.status).toBe(200)
  const turn = new TurnReader(posted)
  const started = await turn.until('execution-started')
  gate.step()
  await turn.until('text-delta')

  const read = async (user: string) => {
    const response = await fetch(`${base}${chatPath}/${started.sessionId}/messages`, {
      headers: as(user),
    })
    return { status: response.status, body: (await response.json()) as unknown }
  }
  const mid = await read('alice')
  const snapshot = parseHistorySnapshot(mid.body)
  expect(snapshot.success && snapshot.value.activeExecutionId).toBe(started.executionId)
  expect((await read('bob')).status).toBe(404)

  const announced = await push.until('agentExecutionUpdated')
  expect(announced.data).toMatchObject({ threadId: started.sessionId })

  const stopPath = `${base}${chatPath}/${started.sessionId}/executions/${started.executionId}`
  const byBob = await fetch(stopPath, { method: 'DELETE', headers: as('bob') })
  expect(byBob.status).toBe(404)
  const stop = await fetch(stopPath, { method: 'DELETE', headers: as('alice') })
  expect(await stop.json()).toMatchObject({ data: { cancelRequested: true } })
  const events = await turn.rest()
  expect(events.at(-1)?.type).toBe('done')
  const ended = await waitFor(async () => {
    const parsed = parseHistorySnapshot((await read('alice')).body)
    return parsed.success && parsed.value.activeExecutionId === null && parsed.value
  }, 'the record to end the turn')
  expect(ended.messages.at(-1)?.executionStatus).toBe('cancelled')
  leave.abort()
}

describe('the kit mounts in any Fetch host [R-SERVER-FETCH-HOSTS]', () => {
  it('serves the contract from a Hono app', async () => {
    const { backend, gate } = newBackend()
    await scenario(await mountInHono(backend), gate)
  })

  it('serves the contract from a React Router resource route', async () => {
    const { backend, gate } = newBackend()
    await scenario(await mountInReactRouter(backend), gate)
  })
})
