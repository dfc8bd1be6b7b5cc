// examples/assistant-ui (built by `pnpm test:e2e` before this runs): the chat in assistant-ui's
// primitives through @preview-chat/assistant-ui, against the reference server. Markdown answers,
// a reload mid-answer, Stop from a second tab, the draft across a reload.
import type { Browser, BrowserContext, Page } from '@playwright/test'
import { fileURLToPath } from 'node:url'
import { startAppServer, type AppServer } from './app-server'
import { expect, test as base } from './fixtures'

const root = fileURLToPath(new URL('../examples/assistant-ui/dist', import.meta.url))

/** The built example in front of the worker's reference server, and a context per user. */
const test = base.extend<{ person: BrowserContext }, { aui: AppServer }>({
  aui: [
    async ({ stack }, use) => {
      const app = await startAppServer({ root, target: stack.server.url })
      await use(app)
      await app.close()
    },
    { scope: 'worker' },
  ],
  person: async ({ browser, aui }, use) => {
    const context = await openContext(browser, aui, 'alice')
    await use(context)
    await context.close()
  },
})

async function openContext(browser: Browser, app: AppServer, user: string) {
  const context = await browser.newContext({ baseURL: app.url })
  await context.addCookies([{ name: 'preview-chat-user', value: user, url: app.url }])
  return context
}

const composer = (page: Page) => page.getByRole('textbox', { name: 'Message' })
const status = (page: Page) => page.getByTestId('status')
const lastAnswer = (page: Page) => page.getByTestId('message-assistant').last()
const stop = (page: Page) => page.getByRole('button', { name: 'Stop' })

async function openNewThread(page: Page): Promise<string> {
  await page.goto('/')
  await expect(page).toHaveURL(/\?thread=/)
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  return page.url()
}

async function send(page: Page, text: string) {
  await composer(page).fill(text)
  await composer(page).press('Enter')
}

test('an answer renders markdown; raw HTML stays text', async ({ person }) => {
  const page = await person.newPage()
  await openNewThread(page)
  await send(page, 'Please make **this bold**, `this code` and <b>this raw</b>')
  await expect(lastAnswer(page)).toHaveAttribute('data-status', 'complete')
  const answer = lastAnswer(page).locator('.part-markdown')
  await expect(answer.locator('strong')).toHaveText('this bold')
  await expect(answer.locator('code')).toHaveText('this code')
  await expect(answer.locator('b')).toHaveCount(0)
  await expect(answer).toContainText('<b>this raw</b>')
  // The reasoning and the tool call of the scripted agent's answer, converted.
  await expect(lastAnswer(page).locator('.part-reasoning')).toHaveCount(1)
  await expect(lastAnswer(page).getByTestId('tool-word_count')).toContainText('done')
  await expect(composer(page)).toHaveValue('')
})

test('a reload mid-answer recovers the answer, which completes; one POST', async ({
  person,
  stack,
  gate,
}) => {
  const page = await person.newPage()
  await openNewThread(page)
  const posts = () => stack.server.backend.inspect.countRequests({ route: 'chat', method: 'POST' })
  const before = posts()

  await send(page, '/long 200')
  await expect(lastAnswer(page)).toContainText('delta 10.')
  gate.hold() // mid-answer until the reloaded page has read it
  await page.reload()

  await expect(lastAnswer(page)).toContainText('delta 10.')
  await expect(lastAnswer(page)).toHaveAttribute('data-status', 'running')
  await expect(stop(page)).toBeEnabled()
  gate.open()
  await expect(lastAnswer(page)).toHaveAttribute('data-status', 'complete', { timeout: 20_000 })
  await expect(lastAnswer(page)).toContainText('delta 200.')
  await expect(page.getByTestId('message-assistant')).toHaveCount(1)
  expect(posts()).toBe(before + 1)
})

test('Stop in a second tab stops the turn in the first', async ({ person, gate }) => {
  const first = await person.newPage()
  const url = await openNewThread(first)
  await send(first, '/long 200')
  await expect(lastAnswer(first)).toContainText('delta 5.')
  gate.hold() // it ends by the Stop, however long the second tab takes to open

  const second = await person.newPage()
  await second.goto(url)
  await expect(lastAnswer(second)).toContainText('delta 5.')
  // The second tab follows the turn: its composer stays editable, Send waits, Stop acts.
  await expect(second.getByRole('button', { name: 'Send' })).toBeDisabled()
  await expect(composer(second)).toBeEditable()
  await stop(second).click()

  await expect(lastAnswer(first)).toHaveAttribute('data-reason', 'cancelled')
  await expect(lastAnswer(second)).toHaveAttribute('data-reason', 'cancelled')
  await expect(lastAnswer(first)).toContainText('Stopped')
  await expect(lastAnswer(first)).not.toContainText('delta 200.')
  await expect(status(first)).toHaveAttribute('data-status', 'idle')
  await expect(first.getByRole('button', { name: 'Send' })).toBeDisabled() // empty composer
  await composer(first).fill('next')
  await expect(first.getByRole('button', { name: 'Send' })).toBeEnabled()
})

test('the draft is restored after a reload, also mid-answer', async ({ person, gate }) => {
  const page = await person.newPage()
  await openNewThread(page)
  await composer(page).fill('a draft to keep')
  await page.reload()
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  await expect(composer(page)).toHaveValue('a draft to keep')

  // While a turn runs: typed during the answer, kept across a reload, sent after it.
  await send(page, '/long 120')
  await expect(lastAnswer(page)).toContainText('delta 3.')
  gate.hold() // mid-answer until the reloaded page shows the draft
  await composer(page).fill('typed while it ran')
  await page.reload()
  await expect(lastAnswer(page)).toContainText('delta 3.')
  await expect(lastAnswer(page)).toHaveAttribute('data-status', 'running')
  await expect(composer(page)).toHaveValue('typed while it ran')
  gate.open()
  await expect(lastAnswer(page)).toHaveAttribute('data-status', 'complete', { timeout: 20_000 })
  await expect(composer(page)).toHaveValue('typed while it ran')
  await composer(page).press('Enter')
  await expect(page.getByTestId('message-user').last()).toContainText('typed while it ran')
  await expect(composer(page)).toHaveValue('')
})
