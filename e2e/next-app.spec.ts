// The Next.js example (examples/next-app), built by `pnpm test:e2e` before this runs: its page is
// rendered on the server and hydrates without a warning, and `/rest` reaches the reference server
// through the app's `rewrites()` (the turn streams and the SSE push channel), so a reload
// mid-answer recovers the answer as it does in the Vite demo.
import { test as base, expect, type Page } from '@playwright/test'
import { startPreviewChatServer, type PreviewChatServer } from '@preview-chat/server/node'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { agentGate, type AgentGate } from './fixtures'
import { collectProblems, freePort, startNext } from './processes'

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

/** Text deltas 50 ms apart: `/long 60` streams for about three seconds. */
const deltaMs = 50

const test = base.extend<
  object,
  { next: { url: string; server: PreviewChatServer; gate: AgentGate } }
>({
  next: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const target = await rewriteTarget()
      const gate = agentGate()
      const server = await startPreviewChatServer({
        dev: true,
        host: target.hostname,
        port: Number(target.port),
        deltaMs,
        snapshotMs: 100,
        sleep: gate.sleep,
      })
      const port = await freePort()
      const next = await startNext(appDir, port)
      await use({ url: `http://127.0.0.1:${port}`, server, gate })
      next.kill('SIGTERM')
      await server.close()
    },
    { scope: 'worker' },
  ],
})

const status = (page: Page) => page.getByTestId('status')
const lastAnswer = (page: Page) => page.getByTestId('message-assistant').last()

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
  next.gate.hold() // mid-answer until the reloaded page has read it

  await page.reload()
  // The page dropped `new=1` once the thread existed: the reload reads it.
  expect(threadUrl).not.toContain('new=1')
  expect(page.url()).toBe(threadUrl)
  // The turn is still running after the reload, and the page follows it to its end.
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'running')
  next.gate.open()
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
