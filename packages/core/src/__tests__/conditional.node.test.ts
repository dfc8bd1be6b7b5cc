/**
 * Issue 38: conditional history reads from Node's own `fetch` (undici), against the reference
 * server on a loopback port, for both flavors. Node follows the Fetch standard: a request carrying
 * `If-None-Match` is made in cache mode `no-store`, which adds `Cache-Control: no-cache` unless
 * the request has a `Cache-Control` of its own, and the server (as n8n 2.41's Express) answers
 * `no-cache` in full. A fetch stand-in adds no header, so only the runtime's own fetch shows it:
 * with the stand-ins these reads passed while every read in Node moved the whole history.
 * Counted on the server side: the statuses it answered, and the `Cache-Control` it was sent.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
// A relative import keeps the workspace free of a core ⇄ server dependency cycle (test-only).
import { startPreviewChatServer, type PreviewChatServer } from '../../../server/src/node/index'
import { createPreviewChatBackend } from '../../../server/src/index'
import { completeReleasedSnapshot } from '../wire/contract/released'
import { createTransport } from '../wire/transport'
import { readsOnlyClient } from './harness'

const flavors = ['spec', 'n8n-2.41'] as const
type FlavorName = (typeof flavors)[number]

let server: PreviewChatServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
})

/** The reference server of `flavor` on a free loopback port, noting each history read's headers. */
async function start(flavor: FlavorName) {
  const backend = createPreviewChatBackend({ dev: true, flavor, deltaMs: 1, snapshotMs: 5 })
  const sent: { cacheControl: string | null; ifNoneMatch: string | null }[] = []
  const noting = {
    ...backend,
    fetch: (request: Request, info?: { ownHosts?: readonly string[] }) => {
      if (request.method === 'GET' && new URL(request.url).pathname.endsWith('/messages'))
        sent.push({
          cacheControl: request.headers.get('cache-control'),
          ifNoneMatch: request.headers.get('if-none-match'),
        })
      return backend.fetch(request, info)
    },
  }
  server = await startPreviewChatServer({ dev: true, port: 0, backend: noting })
  const base = `${server.url}/rest`
  const credentials = backend.credentials('alice')
  const key = { projectId: 'p', agentId: 'a', threadId: crypto.randomUUID() }
  // One finished turn, posted with Node's fetch as any client would.
  const posted = await fetch(`${base}/projects/p/agents/v2/a/chat`, {
    method: 'POST',
    headers: { ...credentials, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'hi', sessionId: key.threadId, newSession: true }),
  })
  expect((await posted.text()).includes('"type":"done"')).toBe(true)
  const statuses = () =>
    backend.inspect.requests
      .filter((entry) => entry.route === 'messages' && entry.method === 'GET')
      .map((entry) => entry.status)
  return { base, credentials, key, sent, statuses }
}

const timers = { setTimeout, clearTimeout, now: Date.now } as const

/**
 * A `fetch` with no HTTP cache and no cache modes, as React Native's (over the platform's HTTP
 * stack): the request goes out with the headers it was given, and nothing else of the kind.
 */
const plainFetch = (async (input, init) => {
  const request = new Request(input, init)
  const headers = Object.fromEntries(request.headers)
  const answer = await new Promise<IncomingMessage>((resolve, reject) => {
    const sent = httpRequest(request.url, { method: request.method, headers }, resolve)
    sent.on('error', reject)
    request.signal.addEventListener('abort', () => sent.destroy(), { once: true })
    sent.end()
  })
  const chunks: Buffer[] = []
  for await (const chunk of answer) chunks.push(chunk as Buffer)
  const status = answer.statusCode ?? 502
  const body = status === 304 || chunks.length === 0 ? null : Buffer.concat(chunks)
  return new Response(body, {
    status,
    headers: Object.entries(answer.headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, String(value)] as [string, string]],
    ),
  })
}) as typeof globalThis.fetch

/** Node's own fetch as given, as an app's wrapper that asks for no HTTP cache, and a plain one. */
const fetches = {
  "Node's fetch": globalThis.fetch,
  "Node's fetch with cache: 'no-store'": ((input, init) =>
    globalThis.fetch(input, { ...init, cache: 'no-store' })) as typeof globalThis.fetch,
  'a fetch without HTTP cache (React Native-like)': plainFetch,
}

describe("conditional reads with the runtime's own fetch [R-READ-STAYS-CONDITIONAL]", () => {
  for (const flavor of flavors)
    for (const [name, fetch] of Object.entries(fetches))
      it(`${flavor}, ${name}: an unchanged thread read four times answers 200, 304, 304, 304`, async () => {
        const world = await start(flavor)
        const transport = createTransport({
          baseUrl: world.base,
          fetch,
          headers: world.credentials,
          requestTimeoutMs: 5_000,
          timers,
          completeSnapshot: completeReleasedSnapshot,
        })
        const first = await transport.readHistory(world.key)
        expect(first.messages.map((message) => message.role)).toEqual(['user', 'assistant'])
        for (let read = 0; read < 3; read++)
          expect(await transport.readHistory(world.key)).toBe(first)

        expect(world.statuses()).toEqual([200, 304, 304, 304])
        // What went out: the first read plain (the app's fetch decides), the later ones
        // conditional with the client's own Cache-Control, which no fetch replaces.
        const etag = world.sent[1]?.ifNoneMatch
        expect(etag).toMatch(/^W\/"/)
        expect(world.sent).toEqual([
          { cacheControl: name.includes('no-store') ? 'no-cache' : null, ifNoneMatch: null },
          ...Array.from({ length: 3 }, () => ({ cacheControl: 'max-age=0', ifNoneMatch: etag })),
        ])
      })

  it('a session in Node: every refresh of an unchanged thread after the first read is a 304', async () => {
    const world = await start('n8n-2.41')
    const client = readsOnlyClient(globalThis.fetch, {
      baseUrl: world.base,
      headers: world.credentials,
    })
    const session = client.session(world.key)
    const stop = session.subscribe(() => {})
    try {
      while (!session.getState().loaded) await new Promise((resolve) => setTimeout(resolve, 5))
      const loaded = session.getState()
      for (let read = 0; read < 3; read++) await session.refresh()
      expect(world.statuses()).toEqual([200, 304, 304, 304])
      expect(session.getState()).toBe(loaded)
    } finally {
      stop()
      session.dispose()
    }
  })
})
