// The built docs site (pnpm docs:build) in Chromium: every page opens with no console error and
// no broken internal link, the local search finds what a reader looks for, and each guide's live
// chat runs in its page against the msw kit's backend, which a reload mid-answer does not lose.
import { expect, test, type Page } from '@playwright/test'
import { fileURLToPath } from 'node:url'
import { startDocsServer, type DocsServer } from './docs-server'

const root = fileURLToPath(new URL('../site/doc_build', import.meta.url))
let docs: DocsServer

test.beforeAll(async () => {
  docs = await startDocsServer(root)
})
test.afterAll(async () => {
  await docs.close()
})

/**
 * The console errors and uncaught exceptions of the page, and the failed requests. `newThread`:
 * the page's example names no `isNew` (the assistant-ui README's page), so a read of its fresh
 * thread before the first message answers 404, which is what a new thread is (the page shows no
 * error): those 404s of a thread's messages are left out, nothing else.
 */
function watchErrors(page: Page, newThread = false): string[] {
  const errors: string[] = []
  const firstRead = /\/chat\/[\w-]+\/messages/
  const push = (line: string) => {
    if (!(newThread && line.includes('404') && firstRead.test(line))) errors.push(line)
  }
  page.on('console', (message) => {
    if (message.type() === 'error')
      push(`${page.url()}: ${message.text()} (${message.location().url})`)
  })
  page.on('pageerror', (error) => push(`${page.url()}: ${error.message}`))
  // Which resource a "Failed to load resource" was.
  page.on('requestfinished', (request) => {
    void request.response().then((response) => {
      if (response && response.status() >= 400) push(`${response.status()} ${request.url()}`)
    })
  })
  return errors
}

test('every page opens without a console error, and every internal link leads to a page', async ({
  context,
}) => {
  test.setTimeout(240_000)
  const seen = new Set<string>(['/'])
  const queue = ['/']
  const broken: string[] = []
  const errors: string[] = []
  // Three tabs take the pages in turn: ~360 pages one by one take minutes on a loaded machine.
  const crawl = async () => {
    const page = await context.newPage()
    const own = watchErrors(page, true) // the assistant-ui guide's page: its new thread's read
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      const response = await page.goto(`${docs.url}${path}`, { waitUntil: 'load' })
      if (response?.status() !== 200) {
        broken.push(`${path}: HTTP ${response?.status()}`)
        continue
      }
      const links = await page.$$eval('a[href]', (anchors) =>
        anchors.map((anchor) => (anchor as HTMLAnchorElement).href),
      )
      for (const href of links) {
        const url = new URL(href)
        if (url.origin !== docs.url || seen.has(url.pathname)) continue
        seen.add(url.pathname)
        queue.push(url.pathname)
      }
      // A tab that finds the queue empty while another still reads its page waits for its links.
      while (queue.length === 0 && busy > 1) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    busy--
    errors.push(...own)
    await page.close()
  }
  let busy = 3
  // The first tab opens the home page alone, so that the others find its links.
  const firstTab = crawl()
  while (queue.length === 0 && seen.size === 1)
    await new Promise((resolve) => setTimeout(resolve, 50))
  await Promise.all([firstTab, crawl(), crawl()])
  expect(broken).toEqual([])
  expect(errors).toEqual([])
  // The guides, the rules, every decision record and the API reference's pages.
  expect(seen.size).toBeGreaterThan(100)
  for (const path of [
    '/guide/getting-started',
    '/guide/queue',
    '/rules',
    '/decisions/posting-hold',
  ])
    expect(
      [...seen].some((each) => each.replace(/\.html$/, '') === path),
      path,
    ).toBe(true)
})

test('the search finds "queue" and "isNew", with no network but the site', async ({ page }) => {
  const errors = watchErrors(page)
  const elsewhere: string[] = []
  page.on('request', (request) => {
    if (!request.url().startsWith(docs.url)) elsewhere.push(request.url())
  })
  await page.goto(`${docs.url}/guide/getting-started`)
  for (const word of ['queue', 'isNew']) {
    await page.locator('.rp-search-button').first().click()
    const input = page.locator('.rp-search-panel__input')
    await input.fill(word)
    const results = page.locator('.rp-search-panel__results')
    await expect(results.getByText(word, { exact: false }).first()).toBeVisible()
    await page.keyboard.press('Escape')
  }
  expect(elsewhere).toEqual([])
  expect(errors).toEqual([])
})

/** The live chat's text of the assistant's answer to `/long N` (the deltas so far). */
async function answerOf(page: Page): Promise<string> {
  const text = (await page.locator('[data-live-chat]').textContent()) ?? ''
  return /delta 1\.(?: ?delta \d+\.)*/.exec(text)?.[0] ?? ''
}

const deltas = (text: string) => text.match(/delta \d+\./g)?.length ?? 0

/** Sends `message` in the page's live chat. */
async function send(page: Page, message: string) {
  const input = page.locator('[data-live-chat] textarea')
  await expect(input).toBeVisible()
  await input.fill(message)
  const sendButton = page.locator('[data-live-chat]').getByRole('button', { name: 'Send' })
  await expect(sendButton).toBeEnabled()
  await sendButton.click()
}

for (const guide of ['getting-started', 'nextjs', 'assistant-ui', 'styling']) {
  test(`${guide}: the live chat answers, and a reload mid-answer finds the answer grown past what it showed`, async ({
    page,
  }) => {
    test.setTimeout(90_000)
    const errors = watchErrors(page, guide === 'assistant-ui')
    await page.goto(`${docs.url}/guide/${guide}`)
    await send(page, '/long 80')
    await expect.poll(async () => deltas(await answerOf(page))).toBeGreaterThanOrEqual(10)
    const before = await answerOf(page)
    await page.reload()
    // Back at once as far as it was (nothing typed out again from the start), then growing.
    await expect
      .poll(async () => deltas(await answerOf(page)))
      .toBeGreaterThanOrEqual(deltas(before))
    expect((await answerOf(page)).startsWith(before.trimEnd())).toBe(true)
    await expect.poll(async () => deltas(await answerOf(page))).toBeGreaterThan(deltas(before) + 5)
    await expect.poll(async () => deltas(await answerOf(page)), { timeout: 30_000 }).toBe(80)
    // One answer, once: the recovered turn was not posted twice.
    const transcript = (await page.locator('[data-live-chat]').textContent()) ?? ''
    expect(transcript.match(/delta 1\./g)).toHaveLength(1)
    expect(errors).toEqual([])
  })
}

test('styling: the composer keeps a visible border under a preflight-like reset', async ({
  page,
}) => {
  await page.goto(`${docs.url}/guide/styling`)
  const input = page.locator('[data-live-chat] textarea')
  await expect(input).toBeVisible()
  expect(await input.evaluate((element) => getComputedStyle(element).borderTopWidth)).toBe('1px')
  // The reset is there: the Send button has the border only its classes give it.
  const stop = page.locator('[data-live-chat] header button')
  expect(await stop.evaluate((element) => getComputedStyle(element).borderTopWidth)).not.toBe('0px')
})

test('queue: what is sent during a turn waits, is kept across a reload, and is sent after it', async ({
  page,
}) => {
  test.setTimeout(90_000)
  const errors = watchErrors(page)
  await page.goto(`${docs.url}/guide/queue`)
  await send(page, '/long 60')
  await expect.poll(async () => deltas(await answerOf(page))).toBeGreaterThanOrEqual(3)
  await send(page, 'Queued while it answers')
  const queued = page.getByRole('list', { name: 'Queued' }).getByText('Queued while it answers')
  await expect(queued).toBeVisible()
  await page.reload()
  await expect(queued).toBeVisible()
  await expect(page.locator('[data-live-chat]').getByText(/You said \(4 words\)/)).toBeVisible({
    timeout: 45_000,
  })
  await expect(queued).toHaveCount(0)
  expect(errors).toEqual([])
})
