// The own-backend example (examples/own-backend), built by `pnpm test:e2e` before this runs: a
// Next.js app whose route handler is the chat backend (`@preview-chat/server` with the AI SDK
// adapter), over the OpenAI-compatible provider pointed at the repository's mock OpenAI server
// (scripts/n8n/mock-openai.mjs), signed in by a session cookie. Nothing is proxied: the page calls
// `/rest` on its own origin.
import { test as base, expect, type Page } from '@playwright/test'
import { fileURLToPath } from 'node:url'
import { composer, lastAnswer, status, stopButton } from './fixtures'
import { childEnv, collectProblems, freePort, startNext, startNodeProcess } from './processes'

const appDir = fileURLToPath(new URL('../examples/own-backend/', import.meta.url))
const mockScript = fileURLToPath(new URL('../scripts/n8n/mock-openai.mjs', import.meta.url))

interface Health {
  requests: number
  aborted: number
}

interface OwnBackend {
  url: string
  /** The mock OpenAI server's counts: model requests, and those whose client went away. */
  health(): Promise<Health>
}

const test = base.extend<object, { app: OwnBackend }>({
  app: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const mockPort = await freePort()
      const mockUrl = `http://127.0.0.1:${mockPort}`
      const mock = await startNodeProcess([mockScript, '--port', String(mockPort)], {
        cwd: appDir,
        env: childEnv(),
        ready: `${mockUrl}/health`,
      })
      const port = await freePort()
      const next = await startNext(appDir, port, {
        env: { OPENAI_BASE_URL: `${mockUrl}/v1` },
        readyPath: '/signin',
      })
      await use({
        url: `http://127.0.0.1:${port}`,
        health: async () => (await (await fetch(`${mockUrl}/health`)).json()) as Health,
      })
      next.kill('SIGTERM')
      mock.kill('SIGTERM')
    },
    { scope: 'worker' },
  ],
})

const answerText = (page: Page) => lastAnswer(page).locator('.part-text')

/** What the mock streams for `[[words=N]]`: `word1 word2 … wordN`. */
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i + 1}`).join(' ')

/** Signs in on the app's form and lands on a new thread. */
async function signIn(page: Page, app: OwnBackend, account = 'ada') {
  await page.goto(`${app.url}/signin`)
  await page.getByLabel('Account').selectOption(account)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page).toHaveURL(/\/t\/[0-9a-f-]{36}\?new=1$/)
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
}

async function send(page: Page, message: string) {
  // Typed once the page is interactive: a fill that lands before hydration is not React's state
  // (the server-rendered Send stays disabled), so the text is typed again until Send takes it.
  await expect(async () => {
    await composer(page).fill(message)
    await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled({ timeout: 1_000 })
  }).toPass({ timeout: 20_000 })
  await page.getByRole('button', { name: 'Send' }).click()
}

test('an answer of the model streams into the page, from the app own route handler [R-OWN-BACKEND-STREAM]', async ({
  page,
  app,
}) => {
  const problems = collectProblems(page)
  // Without a session the backend answers 401, with no detail of anyone's data.
  const refused = await fetch(`${app.url}/rest/projects/own-backend/agents/v2/assistant/chat`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ message: 'hi', newSession: true }),
  })
  expect(refused.status).toBe(401)

  await signIn(page, app)
  const before = await app.health()
  await send(page, 'Hello there [[words=30 delay=20]]')
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  await expect(answerText(page)).toHaveText(words(30))
  await expect(page.getByTestId('message-user')).toHaveText(/Hello there/)
  expect((await app.health()).requests).toBe(before.requests + 1)
  expect(problems).toEqual([])
})

test('a reload mid-answer recovers it and follows it to its end [R-OWN-BACKEND-RELOAD]', async ({
  page,
  app,
}) => {
  const problems = collectProblems(page)
  await signIn(page, app)
  await send(page, 'A long one [[words=80 delay=60]]')
  await expect(answerText(page)).toContainText('word3 ')
  await expect(stopButton(page)).toBeVisible()
  await expect(page).not.toHaveURL(/new=1/)

  await page.reload()
  // The turn runs on in the app's server after the reload; the page follows it to its end.
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'running')
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  await expect(answerText(page)).toHaveText(words(80))
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  await expect(page.getByTestId('message-assistant')).toHaveCount(1)
  expect(problems).toEqual([])
})

test('a second tab follows the thread and Stops it; the Stop ends the model request [R-OWN-BACKEND-TAB-STOP] [R-AISDK-ABORT]', async ({
  page,
  app,
  context,
}) => {
  await signIn(page, app)
  const before = await app.health()
  await send(page, 'Go on and on [[words=400 delay=60]]')
  await expect(answerText(page)).toContainText('word3 ')
  await expect(page).not.toHaveURL(/new=1/)

  // The same person's second tab (the same session cookie) on the same thread.
  const second = await context.newPage()
  await second.goto(page.url())
  await expect(lastAnswer(second)).toHaveAttribute('data-execution-status', 'running')
  await expect(answerText(second)).toContainText('word6 ')
  await stopButton(second).click()

  for (const tab of [page, second]) {
    await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'cancelled')
    await expect(status(tab)).toHaveAttribute('data-status', 'idle')
  }
  // The model's HTTP request was aborted: the mock saw its client go before the stream's end.
  await expect.poll(async () => (await app.health()).aborted).toBe(before.aborted + 1)
  const after = await app.health()
  expect(after.requests).toBe(before.requests + 1)
  const text = (await answerText(page).textContent()) ?? ''
  expect(text.startsWith(words(6))).toBe(true)
  expect(text).not.toContain('word400')
})
