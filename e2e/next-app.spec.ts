// The Next.js example (examples/next-app), built by `pnpm test:e2e` before this runs: its page is
// rendered on the server and hydrates without a warning, and `/rest` reaches the reference server
// through the app's `rewrites()` (the turn streams and the SSE push channel), so a reload
// mid-answer recovers the answer as it does in the Vite demo.
import { test as base, expect, type ConsoleMessage, type Page } from '@playwright/test'
import { startPreviewChatServer, type PreviewChatServer } from '@preview-chat/server/node'
import { spawn, type ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { createServer, type AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'

const appDir = fileURLToPath(new URL('../examples/next-app/', import.meta.url))

/** Where the build sends `/rest`: Next resolves `rewrites()` at build time, into this manifest. */
async function rewriteTarget(): Promise<URL> {
  const manifest = JSON.parse(await readFile(`${appDir}dist/routes-manifest.json`, 'utf8')) as {
    rewrites: { destination: string }[] | Record<string, { destination: string }[]>
  }
  const rules = Array.isArray(manifest.rewrites)
    ? manifest.rewrites
    : Object.values(manifest.rewrites).flat()
  const rest = rules.find((rule) => rule.destination.endsWith('/rest/:path*'))
  if (!rest) throw new Error('examples/next-app was built without its /rest rewrite.')
  return new URL(rest.destination.replace('/rest/:path*', ''))
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** `next start` of the built app; resolves once it answers. */
async function startNext(port: number): Promise<ChildProcess> {
  const nextBin = createRequire(`${appDir}package.json`).resolve('next/dist/bin/next')
  // Not this runner's NODE_OPTIONS (the workspace's source condition): Next runs its own build.
  const { NODE_OPTIONS: _, ...env } = process.env
  const child = spawn(process.execPath, [nextBin, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: appDir,
    env: { ...env, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk))
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`next start exited:\n${output}`)
    const answered = await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' }).then(
      () => true,
      () => false,
    )
    if (answered) return child
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  child.kill()
  throw new Error(`next start did not answer on ${port}:\n${output}`)
}

/** Text deltas 50 ms apart: `/long 60` streams for about three seconds. */
const deltaMs = 50

const test = base.extend<object, { next: { url: string; server: PreviewChatServer } }>({
  next: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const target = await rewriteTarget()
      const server = await startPreviewChatServer({
        dev: true,
        host: target.hostname,
        port: Number(target.port),
        deltaMs,
        snapshotMs: 100,
      })
      const port = await freePort()
      const next = await startNext(port)
      await use({ url: `http://127.0.0.1:${port}`, server })
      next.kill('SIGTERM')
      await server.close()
    },
    { scope: 'worker' },
  ],
})

const status = (page: Page) => page.getByTestId('status')
const lastAnswer = (page: Page) => page.getByTestId('message-assistant').last()

/** Console errors and warnings and uncaught errors of a page, from now on. */
function collectProblems(page: Page): string[] {
  const problems: string[] = []
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`${message.type()}: ${message.text()} (${message.location().url})`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  return problems
}

test('the page is rendered on the server and hydrates without a warning', async ({
  page,
  next,
}) => {
  // The server's HTML, before any script: the shell of the chat is in it.
  const response = await fetch(`${next.url}/?user=alice`)
  expect(response.status).toBe(200)
  expect(new URL(response.url).pathname).toMatch(/^\/t\/[0-9a-f-]{36}$/)
  const html = await response.text()
  expect(html).toContain('preview-chat on Next.js')
  expect(html).toContain('data-testid="transcript"')
  expect(html).toMatch(/<textarea[^>]*id="draft"/)
  expect(html).toContain('>Send</button>')

  const problems = collectProblems(page)
  await page.goto(response.url)
  // Hydrated: the gate opens once the draft has text.
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  await page.getByRole('textbox', { name: 'Message' }).fill('hello')
  await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled()
  // (Hydration reports before that; the push channel's first answer comes soon after.)
  await page.waitForTimeout(500)
  expect(problems.filter((p) => /hydrat/i.test(p))).toEqual([])
  expect(problems).toEqual([])
})

test('a reload mid-answer recovers the answer through the rewrites', async ({ page, next }) => {
  const problems = collectProblems(page)
  await page.goto(`${next.url}/?user=alice`)
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  const textbox = page.getByRole('textbox', { name: 'Message' })
  await textbox.fill('/long 60')
  await textbox.press('Enter')
  await expect(lastAnswer(page)).toContainText('delta 3.')
  await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible()
  const threadUrl = page.url()

  await page.reload()
  // The page dropped `new=1` once the thread existed: the reload reads it.
  expect(threadUrl).not.toContain('new=1')
  expect(page.url()).toBe(threadUrl)
  // The turn is still running after the reload, and the page follows it to its end.
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'running')
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  const text = await lastAnswer(page).locator('.part-text').textContent()
  expect(text).toBe(Array.from({ length: 60 }, (_, i) => `delta ${i + 1}. `).join(''))
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  // Exactly one answer: nothing was posted twice.
  await expect(page.getByTestId('message-assistant')).toHaveCount(1)
  expect(problems).toEqual([])
})

test('a reload that kept ?new=1 after the first answer hydrates clean and reads the thread', async ({
  page,
  next,
}) => {
  const problems = collectProblems(page)
  await page.goto(`${next.url}/?user=alice`)
  const minted = page.url() // `/t/<id>?user=alice&new=1`
  expect(minted).toContain('new=1')
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  const textbox = page.getByRole('textbox', { name: 'Message' })
  await textbox.fill('hello')
  await textbox.press('Enter')
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')

  // An app that keeps the hint in its URL: the server renders a new thread (it takes the hint as
  // given), this browser knows the thread, hydration matches the server's HTML, then it reads.
  await page.goto(minted)
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  await expect(page.getByTestId('message-user')).toHaveCount(1)
  expect(problems.filter((p) => /hydrat/i.test(p))).toEqual([])
  expect(problems).toEqual([])
})

// The assistant-ui README's complete page, as its text has it (examples/next-app/readme-page.mjs
// writes it into the app before `next build`), under /readme/<id> with only the glue a user
// writes: the Next page that renders `<App threadId user />`.
test.describe("the assistant-ui README's page in this Next app", () => {
  const tool = (page: Page, name: string) => page.getByTestId(`tool-${name}`)

  test('works as pasted: a suspension approved, its call answered, hydration clean', async ({
    page,
    next,
  }) => {
    const problems = collectProblems(page)
    await page.goto(`${next.url}/readme/${crypto.randomUUID()}?user=alice`)
    await expect(page.getByTestId('preview-chat-status')).toHaveAttribute('role', 'status')
    const textbox = page.getByRole('textbox', { name: 'Message' })
    await textbox.fill('/suspend')
    await page.getByRole('button', { name: 'Send' }).click()
    await expect(tool(page, 'request_approval')).toContainText('waiting for you')
    await tool(page, 'request_approval').getByRole('button', { name: 'Approve' }).click()
    await expect(tool(page, 'request_approval')).toHaveCount(2)
    await expect(tool(page, 'request_approval').first()).toHaveText('request_approval: answered')
    await expect(tool(page, 'request_approval').last()).toContainText('done')
    await expect(page.getByText('Approved: the email was sent.')).toBeVisible()
    await expect(page.getByTestId('preview-chat-status')).toHaveAttribute('role', 'status')
    // The page passes no `isNew`: the first read of the new thread answers 404 (no error, the
    // browser logs it). Nothing else: no hydration warning, no error.
    const notFound = /^error: Failed to load resource: .* 404 .*\/chat\/[0-9a-f-]{36}\/messages\)$/
    expect(problems.filter((p) => !notFound.test(p))).toEqual([])
  })

  test('misconfigured (a user the server does not know): the page says so on screen', async ({
    page,
    next,
  }) => {
    await page.goto(`${next.url}/readme/${crypto.randomUUID()}?user=mallory`)
    const status = page.getByTestId('preview-chat-status')
    await expect(status).toHaveAttribute('role', 'alert')
    await expect(status).toContainText('No known user. This development server knows alice, bob')
  })
})

test("two requests Next renders through one module's client share no session", async ({ next }) => {
  // app/e2e/module-client: a client at module level. One page minted the id (isNew: nothing to
  // read, `idle`); the next request, another person's from a link, opens the same id without it.
  const threadId = crypto.randomUUID()
  const render = async (query: string) => {
    const response = await fetch(`${next.url}/e2e/module-client/${threadId}${query}`)
    expect(response.status).toBe(200)
    return /data-testid="module-client">([^<]*)</.exec(await response.text())?.[1]
  }
  expect(await render('?new=1')).toBe('idle true')
  // Its own state, not the first request's session: it has not read yet.
  expect(await render('')).toBe('recovering false')
  expect(await render('?new=1')).toBe('idle true')
})
