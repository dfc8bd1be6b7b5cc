import type { Page } from '@playwright/test'
import { seedThread } from '../bench/src/reload/seed'
import type { Stack } from './fixtures'
import { expect, lastAnswer, openNewThread, send, status, test } from './fixtures'

// What the library costs a page load (issue 30): the thread's history crosses the wire once per
// load, and the first read starts before React's first render.

/** The history reads the server answered for `threadId` since `from`: their statuses. */
const statusesOf = (stack: Stack, threadId: string, from: number) =>
  stack.server.backend.inspect.requests
    .slice(from)
    .filter((r) => r.route === 'messages' && r.path.includes(threadId))
    .map((r) => r.status)

/** The page's history reads (Resource Timing): bytes received, body size, status. */
const readsOf = (page: Page) =>
  page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => e as PerformanceResourceTiming)
      .filter((e) => new URL(e.name).pathname.endsWith('/messages'))
      .map((e) => ({
        start: e.startTime,
        transferred: e.transferSize,
        body: e.encodedBodySize,
        status: e.responseStatus,
      })),
  )

async function recordedThread(page: Page): Promise<string> {
  const url = await openNewThread(page)
  for (const turn of [1, 2]) {
    await send(page, `Question ${turn}: tell me about **page loads**`)
    await expect(page.getByTestId('message-assistant')).toHaveCount(turn)
    await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
    await expect(status(page)).toHaveAttribute('data-status', 'idle')
  }
  return new URL(url).searchParams.get('thread') ?? ''
}

test('a page load transfers the thread’s history once: the read after the push connects is a 304 [R-READ-CONDITIONAL]', async ({
  alice,
  newContext,
  stack,
}) => {
  const threadId = await recordedThread(await alice.newPage())
  // A browser that never saw the thread: nothing in its HTTP cache.
  const context = await newContext('alice')
  const page = await context.newPage()
  const from = stack.server.backend.inspect.requests.length
  await page.goto(`/?thread=${threadId}`)
  await expect(page.getByTestId('message-assistant')).toHaveCount(2)
  // The push channel connects and the session reads once more (R-READ-SIGNALS).
  await expect.poll(() => statusesOf(stack, threadId, from).length).toBeGreaterThanOrEqual(2)
  await page.waitForTimeout(500)
  const statuses = statusesOf(stack, threadId, from)
  expect(statuses[0]).toBe(200)
  expect(statuses.slice(1).every((s) => s === 304)).toBe(true)
  const reads = await readsOf(page)
  const full = reads.filter((r) => r.status === 200)
  expect(full).toHaveLength(1)
  const body = full[0]?.body ?? 0
  expect(body).toBeGreaterThan(1000)
  // Every later read is headers only: the body crossed the wire once.
  for (const read of reads.slice(1)) {
    expect(read.status).toBe(304)
    expect(read.body).toBe(0)
    expect(read.transferred).toBeLessThan(1000)
  }
  const transferred = reads.reduce((sum, r) => sum + r.transferred, 0)
  expect(transferred).toBeLessThan(body + 1000 * reads.length)

  // A reload: the browser's own cache revalidates the first read (304 on the wire, the body from
  // the cache), the client's own If-None-Match the next; the body does not cross the wire again.
  const reloadFrom = stack.server.backend.inspect.requests.length
  await page.reload()
  await expect(page.getByTestId('message-assistant')).toHaveCount(2)
  await expect.poll(() => statusesOf(stack, threadId, reloadFrom).length).toBeGreaterThanOrEqual(2)
  expect(statusesOf(stack, threadId, reloadFrom).every((s) => s === 304)).toBe(true)
  const again = await readsOf(page)
  expect(again.every((r) => r.transferred < 1000)).toBe(true)
})

test('client.prefetch starts the read before React’s first render, and the session takes it: one full read [R-READ-PREFETCH]', async ({
  alice,
  newContext,
  stack,
}) => {
  const threadId = await recordedThread(await alice.newPage())
  const context = await newContext('alice')
  const page = await context.newPage()
  // When React first puts anything into #root, before any script of the page runs.
  await page.addInitScript(() => {
    const seen = { firstRender: null as number | null }
    Object.assign(window, { __seen: seen })
    new MutationObserver((_, observer) => {
      if (!document.getElementById('root')?.firstChild) return
      seen.firstRender = performance.now()
      observer.disconnect()
    }).observe(document, { childList: true, subtree: true })
  })
  const from = stack.server.backend.inspect.requests.length
  // `?auth=cookie` (the default auth, said out loud) skips index.html's preload: the read is the
  // one `prefetchFirstThread` (src/App.tsx) starts with `client.prefetch` at module evaluation.
  await page.goto(`/?thread=${threadId}&auth=cookie`)
  await expect(page.getByTestId('message-assistant')).toHaveCount(2)
  await expect.poll(() => statusesOf(stack, threadId, from).length).toBeGreaterThanOrEqual(2)
  const firstRender = await page.evaluate(
    () => (window as unknown as { __seen: { firstRender: number } }).__seen.firstRender,
  )
  const reads = await page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => e as PerformanceResourceTiming)
      .filter((e) => new URL(e.name).pathname.endsWith('/messages'))
      .map((e) => ({ start: e.startTime, initiator: e.initiatorType, status: e.responseStatus })),
  )
  expect(reads[0]?.initiator).toBe('fetch')
  expect(reads[0]?.start).toBeLessThan(firstRender)
  // Taken as the session's first read: no second full read (the next is the push's, a 304).
  expect(statusesOf(stack, threadId, from).filter((s) => s === 200)).toHaveLength(1)
})

/**
 * Holds every history read of `threadId` at the network until `release()`: what shows before
 * that is what the page had without it, whatever the machine's speed. `held()` counts them.
 */
async function holdHistoryReads(page: Page, threadId: string) {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  let held = 0
  await page.route(
    (url) => url.pathname.endsWith(`/chat/${threadId}/messages`),
    async (route) => {
      held++
      await released
      await route.continue()
    },
  )
  return { release, held: () => held }
}

/** What #root held when React first put anything into it: its messages and the status shown. */
async function watchFirstRender(page: Page) {
  await page.addInitScript(() => {
    const seen = { messages: -1, status: '', at: 0 }
    Object.assign(window, { __first: seen })
    new MutationObserver((_, observer) => {
      if (!document.getElementById('root')?.firstChild) return
      seen.messages = document.querySelectorAll('#root article.message').length
      seen.status =
        document.querySelector('[data-testid="status"]')?.getAttribute('data-status') ?? ''
      seen.at = performance.now()
      observer.disconnect()
    }).observe(document, { childList: true, subtree: true })
  })
  return () =>
    page.evaluate(
      () =>
        (window as unknown as { __first: { messages: number; status: string; at: number } })
          .__first,
    )
}

test('the demo’s first render is the transcript: it waits for the prefetched read, not an empty view first [R-DEMO-FIRST-RENDER]', async ({
  alice,
  stack,
}) => {
  const threadId = crypto.randomUUID()
  const marker = seedThread(stack.server.backend.store, threadId, 20)
  const page = await alice.newPage()
  const first = await watchFirstRender(page)
  await page.goto(`/?thread=${threadId}`)
  await expect(page.getByText(marker)).toBeVisible()
  expect(await first()).toMatchObject({ messages: 20, status: 'idle' })
})

test('a read that does not answer delays the demo’s first render by the cap at most: the page renders without it [R-DEMO-FIRST-RENDER]', async ({
  alice,
  stack,
}) => {
  const threadId = crypto.randomUUID()
  const marker = seedThread(stack.server.backend.store, threadId, 20)
  const page = await alice.newPage()
  const first = await watchFirstRender(page)
  const reads = await holdHistoryReads(page, threadId)
  await page.goto(`/?thread=${threadId}`)
  // Rendered while every read is still held at the network: the empty view, recovering.
  await expect(status(page)).toHaveAttribute('data-status', 'recovering')
  expect(reads.held()).toBeGreaterThanOrEqual(1)
  expect(await first()).toMatchObject({ messages: 0, status: 'recovering' })
  reads.release()
  await expect(page.getByText(marker)).toBeVisible()
  await page.unroute(() => true)
})

test('a reload of a 2,000-message thread renders its newest messages first, then every one, pinned at the newest', async ({
  alice,
  stack,
}) => {
  const threadId = crypto.randomUUID()
  const marker = seedThread(stack.server.backend.store, threadId, 2000)
  const page = await alice.newPage()
  await page.addInitScript((marker) => {
    const seen = { atMarker: -1 }
    Object.assign(window, { __seen: seen })
    new MutationObserver((_, observer) => {
      if (!document.body?.textContent?.includes(marker)) return
      seen.atMarker = document.querySelectorAll('article.message').length
      observer.disconnect()
    }).observe(document, { childList: true, subtree: true, characterData: true })
  }, marker)
  await page.goto(`/?thread=${threadId}`)
  await expect(page.locator('article.message')).toHaveCount(2000)
  const atMarker = await page.evaluate(
    () => (window as unknown as { __seen: { atMarker: number } }).__seen.atMarker,
  )
  // The newest 60 in the first commit (Transcript.tsx), the rest in a transition after it.
  expect(atMarker).toBe(60)
  await expect(page.getByText(marker)).toBeInViewport()
})

for (const count of [200, 2000]) {
  test(`with persistTranscripts(), a reload of ${count.toLocaleString('en')} messages shows the kept transcript while its read is still on its way [R-PERSIST-RELOAD]`, async ({
    alice,
    stack,
  }) => {
    const threadId = crypto.randomUUID()
    const marker = seedThread(stack.server.backend.store, threadId, count)
    const page = await alice.newPage()
    await page.goto(`/?thread=${threadId}&persist=1`)
    await expect(page.getByText(marker)).toBeVisible()
    // The transcript is kept (written a moment after the read, in this tab's sessionStorage).
    await expect
      .poll(() =>
        page.evaluate(
          (marker) => Object.values(sessionStorage).some((value) => value.includes(marker)),
          marker,
        ),
      )
      .toBe(true)

    // The network holds every history read of the reload until the test lets it go: what shows
    // before that is what this browser kept, whatever the machine's speed.
    const reads = await holdHistoryReads(page, threadId)
    await page.reload()
    await expect(page.getByText(marker)).toBeVisible()
    await expect(page.locator('article.message')).toHaveCount(count)
    expect(reads.held()).toBeGreaterThanOrEqual(1)
    reads.release()
    // The read answers (a 304 or the same record): the transcript stays as it was.
    await expect(status(page)).toHaveAttribute('data-status', 'idle')
    await expect(page.locator('article.message')).toHaveCount(count)
    await page.unroute(() => true)
  })
}
