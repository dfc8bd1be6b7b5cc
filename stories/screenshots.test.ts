import { createReadStream, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext } from 'playwright'
import { PNG } from 'pngjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium as chromiumLaunch } from './vitest.config'

// The built Storybook (`pnpm build-storybook`), opened in Debian's Chromium: each story's loader
// mounts the backend in the service worker that the build ships, its play function runs, and the
// screenshot of where it ends must show something (not a blank page).
const staticDir = fileURLToPath(new URL('../storybook-static/', import.meta.url))
const outDir = fileURLToPath(new URL('../test-results/stories/', import.meta.url))

const stories = [
  { id: 'chat-states--streaming-live', file: 'streaming-live.png' },
  { id: 'chat-states--failed-read-keeps-transcript', file: 'failed-read.png' },
  { id: 'chat-states--truncated-delegation', file: 'truncated-delegation.png' },
  { id: 'chat-states--not-your-thread', file: 'not-your-thread.png' },
]

const types: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
}

/** A static file server on a loopback port: a service worker needs http(s), not file://. */
function serve(dir: string): Promise<Server> {
  const server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname))
    const file = join(dir, path.endsWith('/') ? `${path}index.html` : path)
    if (!file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'Content-Type': types[extname(file)] ?? 'application/octet-stream' })
    createReadStream(file).pipe(response)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

/** Distinct colours, and the share of pixels that differ from the most common one. */
function pixelStats(png: Buffer): { colours: number; inked: number } {
  const { data } = PNG.sync.read(png)
  const counts = new Map<number, number>()
  for (let i = 0; i < data.length; i += 4) {
    const colour = data.readUInt32BE(i)
    counts.set(colour, (counts.get(colour) ?? 0) + 1)
  }
  const pixels = data.length / 4
  const background = Math.max(...counts.values())
  return { colours: counts.size, inked: (pixels - background) / pixels }
}

let server: Server
let browser: Browser
// One context for all: the service worker registers once, the bundles are fetched once.
let context: BrowserContext
let origin: string

beforeAll(async () => {
  if (!existsSync(join(staticDir, 'iframe.html'))) {
    throw new Error('storybook-static/ is missing: run `pnpm build-storybook` first.')
  }
  mkdirSync(outDir, { recursive: true })
  server = await serve(staticDir)
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await chromium.launch({ ...chromiumLaunch, headless: true })
  context = await browser.newContext({ viewport: { width: 900, height: 640 } })
})

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => server?.close(resolve))
})

describe('the built Storybook', () => {
  it.each(stories)('renders $id (screenshot: $file)', async ({ id, file }) => {
    const page = await context.newPage()
    try {
      // Storybook's channel says when the story (loaders, render, play) finished, and how.
      await page.addInitScript(() => {
        const global = window as unknown as Record<string, unknown>
        const timer = setInterval(() => {
          const channel = global.__STORYBOOK_ADDONS_CHANNEL__ as
            { on(event: string, listener: (payload: unknown) => void): void } | undefined
          if (!channel) return
          clearInterval(timer)
          channel.on('storyFinished', (payload) => (global.__storyFinished = payload))
        }, 5)
      })
      await page.goto(`${origin}/iframe.html?id=${id}&viewMode=story`)
      const finished = await page.waitForFunction(
        () => (window as unknown as Record<string, unknown>).__storyFinished,
        undefined,
        { timeout: 30_000 },
      )
      expect(await finished.jsonValue()).toMatchObject({ storyId: id, status: 'success' })

      const png = await page.screenshot()
      writeFileSync(join(outDir, file), png)
      const { colours, inked } = pixelStats(png)
      expect(colours).toBeGreaterThan(20)
      expect(inked).toBeGreaterThan(0.02)
    } finally {
      await page.close()
    }
  })
})
