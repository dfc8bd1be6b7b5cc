// The recovery promises of shared/spec/preview-chat-recovery.md, seen in a real browser against
// the reference server: reloads, network drops, a second tab, another user, failing reads,
// suspensions, delegations and drafts.
import { fileURLToPath } from 'node:url'
import {
  answerText,
  composer,
  expect,
  lastAnswer,
  openNewThread,
  send,
  sendButton,
  status,
  stopButton,
  test,
  threadIdOf,
} from './fixtures'

const screenshotPath = fileURLToPath(new URL('../docs/screenshot-recovering.png', import.meta.url))

test('1. a reload mid-answer recovers the transcript from history, which keeps growing and completes; one POST [R-TURN-SURVIVES R-RECOVER-READ R-POST-ONCE]', async ({
  alice,
  stack,
  gate,
}) => {
  const page = await alice.newPage()
  await openNewThread(page)
  const postsBefore = stack.server.backend.inspect.countRequests({ route: 'chat', method: 'POST' })

  await send(page, '/long 200')
  await expect(lastAnswer(page)).toContainText('delta 10.')
  gate.hold() // mid-answer until the reloaded page has read it
  await page.reload()

  // Back from the record: the answer is there, still running, and grows.
  await expect(lastAnswer(page)).toContainText('delta 10.')
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'running')
  const recovered = (await answerText(page)).length
  gate.open()
  await expect.poll(async () => (await answerText(page)).length).toBeGreaterThan(recovered)

  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success', {
    timeout: 20_000,
  })
  await expect(lastAnswer(page)).toContainText('delta 200.')
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  // Spec: "The client does not submit the message or resume request again."
  expect(stack.server.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(
    postsBefore + 1,
  )
  await expect(page.getByTestId('message-user')).toHaveCount(1)
})

test('2. a network drop mid-answer shows recovering, then the completed answer once the network is back [R-RECOVER-READ R-READ-SIGNALS]', async ({
  alice,
  stack,
  gate,
}) => {
  const page = await alice.newPage()
  await openNewThread(page)
  await send(page, '/long 200')
  await expect(lastAnswer(page)).toContainText('delta 10.')
  gate.hold() // still running, held, while the network is away

  // The network goes: the browser is offline and the connections it had are dropped.
  await alice.setOffline(true)
  expect(stack.app.cutTurnStreams()).toBe(1)
  stack.app.cutPush()
  await expect(status(page)).toHaveAttribute('data-status', 'recovering')
  await expect(lastAnswer(page)).toContainText('delta 10.') // the transcript stays
  // docs/screenshot-recovering.png: the app mid-recovery (`PREVIEW_CHAT_SCREENSHOTS=1`).
  if (process.env.PREVIEW_CHAT_SCREENSHOTS) await page.screenshot({ path: screenshotPath })

  await page.waitForTimeout(1_000)
  gate.open()
  await alice.setOffline(false)
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success', {
    timeout: 25_000,
  })
  await expect(lastAnswer(page)).toContainText('delta 200.')
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
})

test('3. a second tab follows the running turn, and Stop there ends it; both tabs show it cancelled [R-TABS-FOLLOW R-TABS-STOP R-STOP-RECORD]', async ({
  alice,
  gate,
}) => {
  const first = await alice.newPage()
  const url = await openNewThread(first)
  await send(first, '/long 400')
  await expect(lastAnswer(first)).toContainText('delta 5.')
  gate.hold() // running until the Stop

  const second = await alice.newPage()
  await second.goto(url)
  await expect(status(second)).toHaveAttribute('data-status', 'following')
  await expect(lastAnswer(second)).toContainText('delta 5.')
  const seen = (await answerText(second)).length
  gate.shutAfter(10) // ten more deltas, then held again
  await expect.poll(async () => (await answerText(second)).length).toBeGreaterThan(seen)

  await stopButton(second).click()
  for (const page of [first, second]) {
    await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'cancelled')
    await expect(lastAnswer(page)).toContainText('Cancelled')
    // A cut answer never looks finished.
    await expect(lastAnswer(page).getByRole('note')).toHaveText('Stopped — the answer ends here.')
    await expect(status(page)).toHaveAttribute('data-status', 'idle')
    await expect(stopButton(page)).toHaveCount(0)
  }
  expect(await answerText(first)).not.toContain('delta 400.')
})

test('4. a second tab cannot submit while a turn runs: blocked, or refused with turn_already_running, the draft kept [R-GATE-RUNNING R-GATE-CONFLICT R-DRAFT-KEPT]', async ({
  alice,
  newContext,
  stack,
  gate,
}) => {
  const first = await alice.newPage()
  const url = await openNewThread(first)
  await send(first, 'hello there')
  await expect(lastAnswer(first)).toHaveAttribute('data-execution-status', 'success')

  // A tab in another browser profile, on the same thread, that will not hear of the next turn.
  const elsewhere = await (await newContext('alice')).newPage()
  await elsewhere.goto(url)
  await expect(status(elsewhere)).toHaveAttribute('data-status', 'idle')
  await elsewhere.route('**/chat/*/messages', (route) => route.abort())
  await elsewhere.routeWebSocket('**/rest/push', () => {
    // Accepted, never answered: no notifications reach this tab.
  })

  const posts = () => stack.server.backend.inspect.countRequests({ route: 'chat', method: 'POST' })
  const postsBefore = posts()
  await send(first, '/long 300')
  await expect(lastAnswer(first)).toContainText('delta 3.')
  gate.hold() // running until both competing messages met it

  // The same browser's second tab knows: Send is disabled, Enter sends nothing, the draft stays.
  const second = await alice.newPage()
  await second.goto(url)
  await expect(status(second)).toHaveAttribute('data-status', 'following')
  await composer(second).fill('a competing message')
  await expect(sendButton(second)).toBeDisabled()
  await composer(second).press('Enter')
  await expect(composer(second)).toHaveValue('a competing message')

  // The other profile does not know, so it sends: the server refuses, the draft stays.
  await composer(elsewhere).fill('another competing message')
  await expect(sendButton(elsewhere)).toBeEnabled()
  await composer(elsewhere).press('Enter')
  await expect(elsewhere.getByTestId('error-turn_already_running')).toBeVisible()
  await expect(composer(elsewhere)).toHaveValue('another competing message')

  expect(posts()).toBe(postsBefore + 2) // the first tab's turn and the refused one
  gate.open()
  await expect(lastAnswer(first)).toHaveAttribute('data-execution-status', 'success', {
    timeout: 20_000,
  })
  await expect(first.getByTestId('message-user')).toHaveCount(2)
  await expect(composer(second)).toHaveValue('a competing message')
  await expect(sendButton(second)).toBeEnabled()
})

test("5. bob opening alice's thread sees none of it and no push traffic for it; he may start his own [R-SERVER-PRIVATE]", async ({
  alice,
  newContext,
}) => {
  const page = await alice.newPage()
  const url = await openNewThread(page)
  const threadId = threadIdOf(url)
  await send(page, '/long 200')
  await expect(lastAnswer(page)).toContainText('delta 3.')

  const bob = await (await newContext('bob')).newPage()
  const frames: string[] = []
  bob.on('websocket', (socket) =>
    socket.on('framereceived', (frame) => frames.push(String(frame.payload))),
  )
  await bob.goto(url)
  await expect(bob.getByTestId('error-not_found')).toBeVisible()
  await expect(bob.getByTestId('transcript')).toHaveCount(0)
  await expect(bob.getByTestId('message-user')).toHaveCount(0)
  // Not a dead end: the composer works, and a message would start bob's own conversation.
  await expect(composer(bob)).toBeEnabled()

  // Alice's turn runs on and is announced to her, never to bob.
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success', {
    timeout: 20_000,
  })
  expect(frames.filter((frame) => frame.includes(threadId))).toEqual([])
  await expect(bob.getByTestId('message-assistant')).toHaveCount(0)
})

test('6. failing history reads keep the transcript, and the turn still completes once reads succeed [R-READ-KEEPS]', async ({
  alice,
  gate,
}) => {
  const page = await alice.newPage()
  await openNewThread(page)
  await send(page, '/long 240')
  await expect(lastAnswer(page)).toContainText('delta 5.')
  gate.hold()
  await page.reload() // from here on this tab follows the turn through reads
  await expect(lastAnswer(page)).toContainText('delta 5.')
  // Twenty more deltas, each announced: the reads that follow them fail. Then held, running.
  gate.shutAfter(20)

  await page.route('**/chat/*/messages', (route) =>
    route.fulfill({
      status: 500,
      contentType: 'application/json',
      body: JSON.stringify({ code: 500, message: 'Injected failure' }),
    }),
  )
  await expect(page.getByTestId('error-read_failed')).toBeVisible()
  const kept = await answerText(page)
  expect(kept).toContain('delta 5.')
  await page.waitForTimeout(1_000)
  await expect(lastAnswer(page)).toContainText(kept) // still there, never emptied

  await page.unroute('**/chat/*/messages')
  gate.open()
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success', {
    timeout: 30_000,
  })
  await expect(lastAnswer(page)).toContainText('delta 240.')
  await expect(page.getByTestId('error-read_failed')).toHaveCount(0)
})

test('7. a suspended turn survives a reload, is approved after it, and completes [R-RECOVER-SUSPENDED]', async ({
  alice,
}) => {
  const page = await alice.newPage()
  await openNewThread(page)
  await send(page, '/suspend')
  await expect(page.getByRole('button', { name: 'Approve' })).toBeVisible()

  await page.reload()
  const approve = page.getByRole('button', { name: 'Approve' })
  await expect(approve).toBeEnabled()
  await approve.click()

  await expect(page.getByText('Approved: the email was sent.')).toBeVisible()
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  await expect(page.getByRole('button', { name: 'Approve' })).toHaveCount(0)
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
})

test('8. a delegation over 4,000 characters shows the same child text live and after a reload, marked truncated [R-DELEGATION-BUDGET R-FOLD-ONE]', async ({
  alice,
}) => {
  const page = await alice.newPage()
  await openNewThread(page)
  await send(page, '/delegate 6000')

  // Live: the budget is spent while the child still streams. Read text and status in the same
  // frame the marker appears in.
  const live = await (
    await page.waitForFunction(
      () => {
        if (!document.querySelector('[data-testid="truncated-marker"]')) return false
        return {
          text: document.querySelector('[data-testid="child-text"]')?.textContent ?? '',
          status: document.querySelector<HTMLElement>('[data-testid="status"]')?.dataset.status,
        }
      },
      undefined,
      { polling: 'raf', timeout: 15_000 },
    )
  ).jsonValue()
  if (!live) throw new Error('The truncated marker never appeared.')
  expect(live.status).toBe('streaming')
  expect(live.text.length).toBeGreaterThan(0)

  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  await expect(page.getByTestId('child-text')).toHaveText(live.text)

  await page.reload()
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  await expect(page.getByTestId('child-text')).toHaveText(live.text)
  await expect(page.getByTestId('truncated-marker')).toBeVisible()
})

test('9. a draft typed before a reload is still in the composer after it [R-DRAFT-RELOAD]', async ({
  alice,
  gate,
}) => {
  const page = await alice.newPage()
  await openNewThread(page)
  await send(page, '/long 200')
  await expect(lastAnswer(page)).toContainText('delta 3.')
  gate.hold() // running until the reloaded page shows the draft
  // Editable while the turn runs; Send waits.
  await composer(page).fill('a draft for later\nwith two lines')
  await expect(sendButton(page)).toBeDisabled()

  await page.reload()
  await expect(composer(page)).toHaveValue('a draft for later\nwith two lines')
  await expect(sendButton(page)).toBeDisabled()
  gate.open()
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success', {
    timeout: 20_000,
  })
  await expect(sendButton(page)).toBeEnabled()
  await expect(composer(page)).toHaveValue('a draft for later\nwith two lines')
})

test('10. a newcomer’s setup — Bearer auth and the default push — streams, and a second tab follows live [R-WIRE-CREDENTIALS R-TABS-LIVE]', async ({
  browser,
  stack,
  gate,
}) => {
  // No cookie at all: the header is the only credential, on every request and the push channel.
  const context = await browser.newContext({ baseURL: stack.app.url })
  const pushRequests: string[] = []
  context.on('request', (request) => {
    if (request.url().includes('/rest/push'))
      pushRequests.push(request.headers()['authorization'] ?? 'none')
  })
  const page = await context.newPage()
  await page.goto('/?auth=bearer&user=alice')
  await expect(page).toHaveURL(/\?.*thread=/)
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  const url = page.url()

  const second = await context.newPage()
  await second.goto(url)
  await expect(status(second)).toHaveAttribute('data-status', 'idle')

  gate.shutAfter(5) // five deltas, then held until the second tab follows
  await send(page, '/long 120')
  // The second tab hears of the turn through the push channel and follows it to the end.
  await expect(status(second)).toHaveAttribute('data-status', 'following')
  gate.open()
  await expect(lastAnswer(second)).toContainText('delta 120.', { timeout: 20_000 })
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  expect(pushRequests.length).toBeGreaterThan(0)
  expect(new Set(pushRequests)).toEqual(new Set(['Bearer alice']))
  await context.close()
})
