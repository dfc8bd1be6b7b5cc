// Conditional history reads in Chromium (issue 38): the client's own reads of an unchanged thread
// are 304s at the server, with the page's fetch as it is and with `cache: 'no-store'` (which makes
// Chromium add `Cache-Control: no-cache` to a request that has none, and the server then answers
// in full), from the page's own origin (through a proxy) and from another origin (CORS: the
// client's `If-None-Match` and `Cache-Control` are not safelisted, so the browser preflights).
import { build } from 'esbuild'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { createPreviewChatClient as CreateClient } from '@preview-chat/core'
import { createPreviewChatBackend, type PreviewChatBackend } from '@preview-chat/server'
import { startPreviewChatServer, type PreviewChatServer } from '@preview-chat/server/node'
import { startAppServer, type AppServer } from './app-server'
import { expect, test } from './fixtures'

const coreEntry = fileURLToPath(new URL('../packages/core/src/index.ts', import.meta.url))

/** The headers of each history read the server was sent, in order. */
interface SentRead {
  cacheControl: string | null
  pragma: string | null
  ifNoneMatch: string | null
}

/** One flavor's API, its page on the API's own origin (a proxy) and on another origin. */
interface World {
  backend: PreviewChatBackend
  api: PreviewChatServer
  /** Serves the page and the bundled client, and proxies `/rest` to the API: one origin. */
  sameOrigin: AppServer
  /** Serves the same page on another origin, which calls the API directly (its `cors`). */
  otherOrigin: AppServer
  sent: SentRead[]
}

const flavors = ['spec', 'n8n-2.41'] as const
let root: string
const worlds = new Map<(typeof flavors)[number], World>()

async function startWorld(flavor: (typeof flavors)[number]): Promise<World> {
  // The other origin first: the API names it as the one whose pages may call it.
  const otherOrigin = await startAppServer({ root, target: 'http://127.0.0.1:9' })
  const backend = createPreviewChatBackend({
    dev: true,
    flavor,
    deltaMs: 1,
    snapshotMs: 10,
    cors: otherOrigin.url,
  })
  const sent: SentRead[] = []
  const api = await startPreviewChatServer({
    dev: true,
    port: 0,
    backend: {
      ...backend,
      fetch: (request, info) => {
        if (request.method === 'GET' && new URL(request.url).pathname.endsWith('/messages'))
          sent.push({
            cacheControl: request.headers.get('cache-control'),
            pragma: request.headers.get('pragma'),
            ifNoneMatch: request.headers.get('if-none-match'),
          })
        return backend.fetch(request, info)
      },
    },
  })
  const sameOrigin = await startAppServer({ root, target: api.url })
  return { backend, api, sameOrigin, otherOrigin, sent }
}

test.beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'preview-chat-conditional-'))
  const bundle = await build({
    entryPoints: [coreEntry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['@preview-chat/source'],
    write: false,
  })
  await writeFile(join(root, 'core.js'), bundle.outputFiles[0]?.text ?? '')
  await writeFile(
    join(root, 'index.html'),
    '<!doctype html><title>conditional reads</title><script type="module">import * as core from "/core.js"; window.previewChat = core</script>',
  )
  for (const flavor of flavors) worlds.set(flavor, await startWorld(flavor))
})

test.afterAll(async () => {
  for (const world of worlds.values()) {
    await world.sameOrigin.close()
    await world.otherOrigin.close()
    await world.api.close()
    await world.backend.close()
  }
  await rm(root, { recursive: true, force: true })
})

/** How a page is alice: a cookie (n8n's with its `browser-id` header, which a page can send). */
const browserAuth = {
  spec: { cookie: 'preview-chat-user', headers: {} },
  'n8n-2.41': { cookie: 'n8n-auth', headers: { 'browser-id': 'e2e-browser' } },
} as const

/** A new thread of alice's with one finished turn. */
async function recordedThread(world: World): Promise<string> {
  const threadId = crypto.randomUUID()
  const answer = await fetch(`${world.api.url}/rest/projects/p/agents/v2/a/chat`, {
    method: 'POST',
    headers: { ...world.backend.credentials('alice'), 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'hi', sessionId: threadId, newSession: true }),
  })
  expect(await answer.text()).toContain('"type":"done"')
  return threadId
}

/** The statuses the server answered to the history reads of `threadId`. */
const statusesOf = (world: World, threadId: string) =>
  world.backend.inspect.requests
    .filter((r) => r.route === 'messages' && r.method === 'GET' && r.path.includes(threadId))
    .map((r) => r.status)

for (const flavor of flavors)
  for (const origin of ['same origin', 'another origin'] as const)
    for (const noStore of [false, true])
      test(`${flavor}, ${origin}, ${noStore ? "cache: 'no-store'" : 'the default cache'}: an unchanged thread read four times by the client answers 200, 304, 304, 304 [R-READ-STAYS-CONDITIONAL R-SERVER-CORS]`, async ({
        browser,
      }) => {
        const world = worlds.get(flavor) as World
        const page = origin === 'same origin' ? world.sameOrigin : world.otherOrigin
        const context = await browser.newContext()
        const cookieUrl = origin === 'same origin' ? page.url : world.api.url
        const { cookie, headers } = browserAuth[flavor]
        await context.addCookies([{ name: cookie, value: 'alice', url: cookieUrl }])
        const tab = await context.newPage()
        await tab.goto(page.url)
        await tab.waitForFunction(() => 'previewChat' in window)
        const threadId = await recordedThread(world)
        const from = world.sent.length
        const baseUrl = origin === 'same origin' ? '/rest' : `${world.api.url}/rest`
        const seen = await tab.evaluate(
          async ({ baseUrl, threadId, noStore, headers }) => {
            const { createPreviewChatClient } = (
              window as unknown as { previewChat: { createPreviewChatClient: typeof CreateClient } }
            ).previewChat
            const client = createPreviewChatClient({
              baseUrl,
              headers,
              credentials: 'include',
              // An app's fetch that asks for no HTTP cache at all.
              ...(noStore && {
                fetch: (input: RequestInfo | URL, init?: RequestInit) =>
                  fetch(input, { ...init, cache: 'no-store' }),
              }),
              push: false,
              relay: false,
              storage: null,
              minReadIntervalMs: 0,
            })
            const session = client.session({ projectId: 'p', agentId: 'a', threadId })
            const stop = session.subscribe(() => {})
            while (!session.getState().loaded)
              await new Promise((resolve) => setTimeout(resolve, 5))
            const loaded = session.getState()
            for (let read = 0; read < 3; read++) await session.refresh()
            const same = session.getState() === loaded
            const roles = loaded.messages.map((message) => message.role)
            stop()
            session.dispose()
            return { same, roles }
          },
          { baseUrl, threadId, noStore, headers },
        )
        expect(seen).toEqual({ same: true, roles: ['user', 'assistant'] })
        expect(statusesOf(world, threadId)).toEqual([200, 304, 304, 304])
        // What went out: the first read as the page's fetch makes it (with 'no-store', Chromium's
        // `no-cache`), the later ones with the client's own Cache-Control, which Chromium keeps.
        const reads = world.sent.slice(from)
        const etag = reads[1]?.ifNoneMatch
        expect(etag).toMatch(/^W\/"/)
        const pragma = noStore ? 'no-cache' : null
        expect(reads).toEqual([
          { cacheControl: noStore ? 'no-cache' : null, pragma, ifNoneMatch: null },
          ...Array.from({ length: 3 }, () => ({
            cacheControl: 'max-age=0',
            pragma,
            ifNoneMatch: etag,
          })),
        ])
        await context.close()
      })
