// Issue 29's "Done when", in Chromium: three tabs of one user (three pages of one browser context,
// which share localStorage and Web Locks as tabs do) write while a turn runs, one reloads, one
// closes mid-send, Stop is pressed once; every message is recorded once, in the order written.
// With `?queue=1` against the spec and next-era flavors (the demo's queue), with `?queue=keep`
// against next-era's own queue (each message handed to it as written, edited, removed and steered
// there), and with the gate against the released n8n 2.41's, which has no dedupe and no message
// ids. The agent's pauses wait on a gate the test opens, and the app server holds message POSTs
// (their answers, the push): every state asserted here lasts until the test moves on, whatever
// the machine's speed.
import { test as base, expect, type BrowserContext, type Page } from '@playwright/test'
import type { FlavorName } from '@preview-chat/server'
import { fileURLToPath } from 'node:url'
import type { HeldChatPost } from './app-server'
import {
  type AgentGate,
  composer,
  expectNoAxeViolations,
  lastAnswer,
  openContext,
  openNewThread,
  send,
  sendButton,
  startStack,
  status,
  stopButton,
  threadIdOf,
  type Stack,
} from './fixtures'

const shots = fileURLToPath(new URL('../test-results/queue/', import.meta.url))

const test = base.extend<{
  flavor: FlavorName
  gate: AgentGate
  stack: Stack
  alice: BrowserContext
}>({
  flavor: ['spec', { option: true }],
  stack: async ({ flavor }, use) => {
    const stack = await startStack({ flavor })
    await use(stack)
    await stack.close()
  },
  gate: async ({ stack }, use) => use(stack.gate),
  alice: async ({ browser, stack }, use) => {
    const context = await openContext(browser, stack, 'alice')
    await context.addInitScript(recordQueueStates)
    await use(context)
    await context.close()
  },
})

// --- what a person sees -------------------------------------------------------------------

/**
 * Runs in every page from its first byte: what its queue shows (`text:status` of each message,
 * `|paused`), each new state once, as the DOM passes through them.
 */
function recordQueueStates() {
  const describe = () => {
    const queue = document.querySelector<HTMLElement>('[data-testid="queue"]')
    if (!queue) return '[]'
    const items = [...queue.querySelectorAll<HTMLElement>('[data-testid="queued-message"]')].map(
      (item) =>
        `${item.querySelector('[data-testid="queued-text"]')?.textContent ?? '(editing)'}:${item.dataset.status}`,
    )
    return `[${items.join(',')}]${queue.dataset.paused === 'true' ? '|paused' : ''}`
  }
  const states: string[] = []
  Object.assign(window, { __queue: { states, describe } })
  new MutationObserver(() => {
    const state = describe()
    if (states.at(-1) !== state) states.push(state)
  }).observe(document, { childList: true, subtree: true, attributes: true, characterData: true })
}

interface QueueProbe {
  __queue: { states: string[]; describe(): string }
}

/**
 * Runs in a page from its first byte: its queue (`text:status` each) and the person's messages in
 * its transcript, each new pair once (`__shown`).
 */
function recordQueueAndTranscript() {
  const texts = (selector: string, text: (element: HTMLElement) => string) =>
    [...document.querySelectorAll<HTMLElement>(selector)].map(text).join(',')
  const shown: string[] = []
  Object.assign(window, { __shown: shown })
  new MutationObserver(() => {
    const queue = texts(
      '[data-testid="queued-message"]',
      (item) =>
        `${item.querySelector('[data-testid="queued-text"]')?.textContent}:${item.dataset.status}`,
    )
    const users = texts('[data-testid="message-user"] .part-text', (part) => part.textContent ?? '')
    const state = `queue [${queue}] transcript [${users}]`
    if (shown.at(-1) !== state) shown.push(state)
  }).observe(document, { childList: true, subtree: true, attributes: true, characterData: true })
}

/** The states a page's queue went through (since its last load). */
const queueStates = (page: Page) =>
  page.evaluate(() => (window as unknown as QueueProbe).__queue.states)

/** Every tab shows `queue` (`text:status` each), `|paused` when paused. */
async function expectQueue(tabs: Page[], queue: string[], paused = false, timeout?: number) {
  const shown = `[${queue.join(',')}]${paused ? '|paused' : ''}`
  for (const tab of tabs)
    await expect
      .poll(() => tab.evaluate(() => (window as unknown as QueueProbe).__queue.describe()), {
        timeout,
      })
      .toBe(shown)
}

const queueList = (page: Page) => page.getByRole('list', { name: 'Queued messages' })
const queuedItem = (page: Page, text: string) =>
  queueList(page).getByRole('listitem').filter({ hasText: text })
const sendQueued = (page: Page) => page.getByRole('button', { name: /^Send queued \(\d+\)$/ })

/** The person's messages in the transcript, in order. */
const userTexts = (page: Page) =>
  page.getByTestId('message-user').locator('.part-text').allTextContents()

/**
 * The tab that POSTed `message` last, other than `not` (every tab's requests, as Chromium reports
 * them: a report may come after the app server has the request, so it is waited for).
 */
function posters(tabs: Page[]) {
  const by = new Map<string, Page>()
  for (const tab of tabs)
    tab.on('request', (request) => {
      if (request.method() !== 'POST' || !new URL(request.url()).pathname.endsWith('/chat')) return
      const { message } = request.postDataJSON() as { message?: string }
      if (message !== undefined) by.set(message, tab)
    })
  return async (message: string, not?: Page): Promise<Page> => {
    await expect.poll(() => by.get(message) !== undefined && by.get(message) !== not).toBe(true)
    return by.get(message) as Page
  }
}

/** The next message POST the app server holds, failing after `ms` (a wait, not an assertion). */
async function nextHeld(stack: Stack, ms = 15_000): Promise<HeldChatPost> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`No message POST within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([stack.app.nextHeldPost(), late])
  } finally {
    clearTimeout(timer)
  }
}

// --- what the server recorded, read over HTTP ----------------------------------------------

interface RecordedTurn {
  text: string
  messageId: string | undefined
  /** How its answer ended (`running` while it runs). */
  answer: string | undefined
}

interface RecordedMessage {
  role: string
  executionId: string
  executionStatus?: string
  messageId?: string
  content: { type: string; text?: string }[]
}

/** The thread's messages as its owner reads them (`null` while the server has no such thread). */
async function recordedMessages(
  stack: Stack,
  flavor: FlavorName,
  threadId: string,
): Promise<RecordedMessage[] | null> {
  const headers: Record<string, string> =
    flavor === 'n8n-2.41'
      ? { cookie: 'n8n-auth=alice', 'browser-id': 'e2e' }
      : { authorization: 'Bearer alice' }
  const response = await fetch(
    `${stack.server.url}/rest/projects/demo-project/agents/v2/demo-agent/chat/${threadId}/messages`,
    { headers },
  )
  // A thread n8n 2.41 has not recorded yet is a 404.
  if (response.status !== 200) return null
  const { data } = (await response.json()) as { data: { messages: RecordedMessage[] } }
  return data.messages
}

const textOf = (message: RecordedMessage) =>
  message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')

/**
 * The thread's turns as its owner reads them: each user message, with its answer's status
 * (`null` while the server has no such thread).
 */
async function recordedTurns(stack: Stack, flavor: FlavorName, threadId: string) {
  const messages = await recordedMessages(stack, flavor, threadId)
  return (
    messages
      ?.filter((message) => message.role === 'user')
      .map((message): RecordedTurn => ({
        text: textOf(message),
        messageId: message.messageId,
        answer: messages.find(
          (m) => m.role === 'assistant' && m.executionId === message.executionId,
        )?.executionStatus,
      })) ?? null
  )
}

/**
 * The server's own queue of the thread (next-era's `GET …/queue`, read as its owner), in its
 * order: each item's text, `:steering` after one reserved for the running turn.
 */
async function serverQueue(stack: Stack, threadId: string): Promise<string[]> {
  const response = await fetch(
    `${stack.server.url}/rest/projects/demo-project/agents/v2/demo-agent/chat/${threadId}/queue`,
    { headers: { authorization: 'Bearer alice' } },
  )
  const { data } = (await response.json()) as {
    data: { items: { message: string; steeringExecutionId: string | null }[] }
  }
  return data.items.map((item) =>
    item.steeringExecutionId === null ? item.message : `${item.message}:steering`,
  )
}

/**
 * A first turn under way in a new thread, held at the agent's sixth pause, and two more tabs on
 * it (`path`: the app's switches).
 */
async function threeTabsOnARunningTurn(
  {
    alice,
    stack,
    gate,
    flavor,
  }: { alice: BrowserContext; stack: Stack; gate: Gate; flavor: FlavorName },
  path: string,
) {
  gate.shutAfter(5)
  const a = await alice.newPage()
  const url = await openNewThread(a, path)
  const threadId = threadIdOf(url)
  await send(a, '/long 60')
  await expect(lastAnswer(a)).toContainText('delta 5.')
  // Once the record has it, a tab that opens (or reloads) finds the turn there too.
  await expect
    .poll(() => recordedTurns(stack, flavor, threadId).then((turns) => turns?.[0]?.answer))
    .toBe('running')
  const b = await alice.newPage()
  const c = await alice.newPage()
  for (const tab of [b, c]) {
    await tab.goto(url)
    await expect(status(tab)).toHaveAttribute('data-status', 'following')
  }
  await expect(status(a)).toHaveAttribute('data-status', 'streaming')
  return { a, b, c, tabs: [a, b, c], threadId }
}

type Gate = AgentGate

/**
 * The timeout of a test that closes a tab mid-send: the closed tab's unanswered POST holds the
 * other tabs for the client's `submitTimeoutMs` (30 s) before the message is sent again.
 */
const closingATab = 120_000

// --- the queue: spec and next-era ----------------------------------------------------------

for (const flavor of ['spec', 'next-era'] as const) {
  test.describe(`${flavor} flavor, ?queue=1`, () => {
    test.use({ flavor })

    test('three tabs write while a turn runs, one reloads, one closes mid-send, Stop pauses, "Send queued" resumes: each message recorded once, in order [R-QUEUE-CLIENT R-QUEUE-CLIENT-ONCE R-QUEUE-CLIENT-DURABLE R-QUEUE-CLIENT-ORPHAN R-QUEUE-CLIENT-STOPPED R-QUEUE-CLIENT-EDIT]', async ({
      alice,
      stack,
      gate,
    }) => {
      test.setTimeout(closingATab)
      const { a, b, c, tabs, threadId } = await threeTabsOnARunningTurn(
        { alice, stack, gate, flavor },
        '/?queue=1',
      )
      const poster = posters(tabs)

      // Written in two tabs while the turn runs: Send still sends, and the message waits in the
      // queue, shown in every tab and in no transcript.
      await composer(b).fill('one from B')
      await expect(sendButton(b)).toBeEnabled()
      await composer(b).press('Enter')
      await expect(composer(b)).toHaveValue('')
      await expectQueue(tabs, ['one from B:queued'])
      await send(a, 'two from A')
      await expectQueue(tabs, ['one from B:queued', 'two from A:queued'])
      await send(b, 'three from B')
      await expectQueue(tabs, ['one from B:queued', 'two from A:queued', 'three from B:queued'])
      await send(a, 'typo from A')
      const written = ['one from B', 'two from A', 'three from B', 'typo from A']
      await expectQueue(
        tabs,
        written.map((text) => `${text}:queued`),
      )
      for (const tab of tabs) await expect(tab.getByTestId('message-user')).toHaveCount(1)

      // A reload shows the queue at once, from storage.
      await c.reload()
      await expect(status(c)).toHaveAttribute('data-status', 'following')
      await expectQueue(
        [c],
        written.map((text) => `${text}:queued`),
      )

      // Edited inline in one tab, removed in another: every tab shows the one queue.
      await queuedItem(c, 'three from B').getByRole('button', { name: 'Edit' }).click()
      const editor = c.getByRole('textbox', { name: 'Edit queued message' })
      const threeEdited = 'three from B edited in C'
      await editor.fill(threeEdited)
      await editor.press('Enter')
      const edited = ['one from B', 'two from A', 'three from B edited in C', 'typo from A']
      await expectQueue(
        tabs,
        edited.map((text) => `${text}:queued`),
      )
      await queuedItem(b, 'typo from A').getByRole('button', { name: 'Remove' }).click()
      const queue = ['one from B', 'two from A', 'three from B edited in C']
      await expectQueue(
        tabs,
        queue.map((text) => `${text}:queued`),
      )

      // The turn ends; the sending tab marks the first message `sending` and posts it: the app
      // server holds that POST, and the tab closes before the server has seen it.
      stack.app.holdChatPosts(true)
      gate.open()
      const lost = await nextHeld(stack)
      expect(lost.post.message).toBe('one from B')
      gate.shutAfter(0) // the next turn holds at the agent's first pause
      await expectQueue(tabs, ['one from B:sending', 'two from A:queued', `${queue[2]}:queued`])
      for (const tab of tabs)
        await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'success')
      const closed = await poster('one from B')
      const stay = tabs.filter((tab) => tab !== closed)
      // The one that stayed all along (the other one reloaded): its states are asserted at the end.
      const watcher = stay.find((tab) => tab !== c) ?? c
      await closed.close()
      await lost.dropped

      // The next sender reads the thread: the record has no such message, and this server
      // dedupes, so it is queued again and sent with the same id once the closed tab's posting
      // hold has expired.
      await expectQueue(stay, ['one from B:queued', 'two from A:queued', `${queue[2]}:queued`])
      const resent = await nextHeld(stack, 45_000)
      expect(resent.post).toMatchObject({ message: 'one from B', messageId: lost.post.messageId })
      const sender = await poster('one from B', closed)
      await expectQueue(stay, ['one from B:sending', 'two from A:queued', `${queue[2]}:queued`])
      resent.release()
      await expectQueue(stay, ['two from A:queued', `${queue[2]}:queued`])
      for (const tab of stay) {
        await expect(tab.getByTestId('message-user').last()).toContainText('one from B')
        await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'running')
      }

      // Stop, pressed once in the tab that sent the turn: it ends cancelled, and the queue pauses
      // in every tab; nothing is sent until "Send queued (2)" (pressed in another tab: below).
      await stopButton(sender).click()
      for (const tab of stay) {
        await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'cancelled')
        await expect(status(tab)).toHaveAttribute('data-status', 'idle')
        await expect(sendQueued(tab)).toHaveText('Send queued (2)')
      }
      await expectQueue(stay, ['two from A:queued', `${queue[2]}:queued`], true)
      await expectNoAxeViolations(sender) // the paused queue, with its buttons
      await sender.screenshot({ path: `${shots}paused-${flavor}.png` })
      const postsWhenPaused = stack.app.chatPosts.length

      await sendQueued(sender).click()
      const two = await nextHeld(stack)
      expect(two.post.message).toBe('two from A')
      expect(stack.app.chatPosts.length).toBe(postsWhenPaused + 1)
      await expectQueue(stay, ['two from A:sending', `${queue[2]}:queued`])
      for (const tab of stay) await expect(sendQueued(tab)).toHaveCount(0)
      two.release()
      await expectQueue(stay, [`${queue[2]}:queued`])
      gate.open()
      const three = await nextHeld(stack)
      expect(three.post.message).toBe(queue[2])
      await expectQueue(stay, [`${queue[2]}:sending`])
      three.release()
      for (const tab of stay) {
        await expect(queueList(tab)).toHaveCount(0)
        await expect(tab.getByTestId('message-user')).toHaveCount(4)
        await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'success')
        await expect(status(tab)).toHaveAttribute('data-status', 'idle')
        expect(await userTexts(tab)).toEqual(['/long 60', ...queue])
      }

      // The record: every message once, in the order written, under the id it was queued with.
      const first = stack.app.chatPosts[0]
      expect(await recordedTurns(stack, flavor, threadId)).toEqual([
        { text: '/long 60', messageId: first?.messageId, answer: 'success' },
        { text: 'one from B', messageId: lost.post.messageId, answer: 'cancelled' },
        { text: 'two from A', messageId: two.post.messageId, answer: 'success' },
        { text: queue[2], messageId: three.post.messageId, answer: 'success' },
      ])
      // The POSTs: each message reached the server once; the one whose tab closed was posted
      // twice with one id, the first time never reaching the server; the removed one never.
      expect(stack.app.chatPosts.map((post) => [post.message, post.reached])).toEqual([
        ['/long 60', true],
        ['one from B', false],
        ['one from B', true],
        ['two from A', true],
        [queue[2], true],
      ])
      expect(new Set(stack.app.chatPosts.map((post) => post.messageId)).size).toBe(4)

      // What the tab that stayed showed, in order: queued → sending → gone, paused → resumed.
      const q = (...items: string[]) => `[${items.join(',')}]`
      expect(await queueStates(watcher)).toEqual([
        q(),
        q('one from B:queued'),
        q('one from B:queued', 'two from A:queued'),
        q('one from B:queued', 'two from A:queued', 'three from B:queued'),
        q(...written.map((text) => `${text}:queued`)),
        q(...edited.map((text) => `${text}:queued`)),
        q(...queue.map((text) => `${text}:queued`)),
        q('one from B:sending', 'two from A:queued', `${queue[2]}:queued`),
        // Judged after the sending tab closed: not in the record, so queued again (same id).
        q('one from B:queued', 'two from A:queued', `${queue[2]}:queued`),
        q('one from B:sending', 'two from A:queued', `${queue[2]}:queued`),
        q('two from A:queued', `${queue[2]}:queued`),
        `${q('two from A:queued', `${queue[2]}:queued`)}|paused`,
        // Resumed; then marked `sending` in a transaction of the store, and posted once committed.
        q('two from A:queued', `${queue[2]}:queued`),
        q('two from A:sending', `${queue[2]}:queued`),
        q(`${queue[2]}:queued`),
        q(`${queue[2]}:sending`),
        q(),
      ])
    })

    // Stop pressed in a tab that does not send: the sender learns of the cancelled turn from its
    // own stream before the pause reaches it through the store. It sends nothing until the record
    // shows how the turn it saw ended, and then pauses on a cancelled turn itself (core's queue
    // slice, `readyToSend` and `whenStopped`); the pause is written in a store transaction, so no
    // tab's write loses it.
    test('a reload after two messages were queued finds an empty composer: they wait in the queue, and are sent once each [R-QUEUE-DRAFT-STORED]', async ({
      alice,
      stack,
      gate,
    }) => {
      gate.shutAfter(5)
      const a = await alice.newPage()
      // What the composer holds, from the page's first frame on, each new value once.
      await a.addInitScript(() => {
        const seen: string[] = []
        Object.assign(window, { __composer: seen })
        const look = () => {
          const box = document.querySelector<HTMLTextAreaElement>('textarea')
          if (box && seen.at(-1) !== box.value) seen.push(box.value)
          requestAnimationFrame(look)
        }
        look()
      })
      const url = await openNewThread(a, '/?queue=1')
      await send(a, '/long 60')
      await expect(lastAnswer(a)).toContainText('delta 5.')
      await send(a, 'one')
      await expect(composer(a)).toHaveValue('')
      await send(a, 'two')
      await expect(composer(a)).toHaveValue('')
      await expectQueue([a], ['one:queued', 'two:queued'])
      // Both are in the store before the page is left: another tab reads them there. The page
      // shows a message before its write commits, one write after another, and a write still
      // pending as the page goes is best effort (`queue-leaving`): the test's reload, milliseconds
      // after the second message showed, found `two` missing in a CI run (2026-12-07).
      const other = await alice.newPage()
      await other.goto(url)
      await expectQueue([other], ['one:queued', 'two:queued'])
      await other.close()

      await a.goto(url)
      await expect(status(a)).toHaveAttribute('data-status', 'following')
      await expectQueue([a], ['one:queued', 'two:queued'])
      await expect(composer(a)).toHaveValue('')
      // Never, since the page loaded, did the composer hold a queued message.
      expect(
        await a.evaluate(() => (window as unknown as { __composer: string[] }).__composer),
      ).toEqual([''])
      await expect(a.getByRole('button', { name: 'Send', exact: true })).toBeDisabled()

      gate.open()
      await expect(a.getByTestId('message-user')).toHaveCount(3, { timeout: 30_000 })
      expect(await userTexts(a)).toEqual(['/long 60', 'one', 'two'])
      await expectQueue([a], [])
      const posted = stack.app.chatPosts.map((post) => post.message)
      expect(posted.filter((m) => m === 'one')).toHaveLength(1)
      expect(posted.filter((m) => m === 'two')).toHaveLength(1)
    })

    test('Stop pressed in a tab that does not send pauses the queue before the sender sends the next message [R-QUEUE-CLIENT-STOPPED]', async ({
      alice,
      stack,
      gate,
    }) => {
      const { a, b } = await threeTabsOnARunningTurn({ alice, stack, gate, flavor }, '/?queue=1')
      await send(b, 'after the stop')
      await expectQueue([a, b], ['after the stop:queued'])
      stack.app.holdChatPosts(true) // a POST that should not go out would wait here
      await stopButton(b).click()
      for (const tab of [a, b]) {
        await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'cancelled')
        await expect(sendQueued(tab)).toHaveText('Send queued (1)')
      }
      await expectQueue([a, b], ['after the stop:queued'], true)
      // What the sending tab (the first one) showed: never `sending`.
      expect(await queueStates(a)).toEqual([
        '[]',
        '[after the stop:queued]',
        '[after the stop:queued]|paused',
      ])
      expect(stack.app.chatPosts.map((post) => post.message)).toEqual(['/long 60'])
    })
  })
}

// The next-era server answers a message POSTed into a free thread with `message-queued`, then
// takes it up at once (`execution-started` on the same stream).
test.describe('next-era flavor, ?queue=1, a thread that is free', () => {
  test.use({ flavor: 'next-era' })

  test('a queued message the server takes up at once leaves the queue as its turn begins: never queued and in the transcript at once [R-QUEUE-CLIENT R-QUEUE-SERVER-ACCEPT]', async ({
    alice,
    stack,
    gate,
  }) => {
    gate.shutAfter(5)
    const a = await alice.newPage()
    await a.addInitScript(recordQueueAndTranscript)
    await openNewThread(a, '/?queue=1')
    await send(a, '/long 60')
    await expect(lastAnswer(a)).toContainText('delta 5.')
    await send(a, 'next one')
    await expectQueue([a], ['next one:queued'])
    stack.app.holdChatPosts(true)
    gate.open()
    const held = await nextHeld(stack)
    expect(held.post.message).toBe('next one')
    await expectQueue([a], ['next one:sending'])
    held.release()
    await expect.poll(() => userTexts(a)).toEqual(['/long 60', 'next one'])
    await expect(queueList(a)).toHaveCount(0)
    await expect(lastAnswer(a)).toHaveAttribute('data-execution-status', 'success')
    const states = await a.evaluate(() => (window as unknown as { __shown: string[] }).__shown)
    expect(states).toEqual([
      'queue [] transcript []',
      'queue [] transcript [/long 60]',
      'queue [next one:queued] transcript [/long 60]',
      'queue [next one:sending] transcript [/long 60]',
      'queue [] transcript [/long 60,next one]',
    ])
  })
})

// --- the server's own queue: next-era, ?queue=keep -----------------------------------------

/**
 * `states` as `expected` says, where a `{ maybe }` state may have been passed through or not: a tab
 * that reads another tab's write while a third overwrites it may see the second write only.
 */
function expectStates(states: string[], expected: (string | { maybe: string })[]) {
  let at = 0
  const resolved: string[] = []
  for (const state of expected) {
    if (typeof state === 'string') resolved.push(state)
    else if (states[at] === state.maybe) resolved.push(state.maybe)
    else continue
    at++
  }
  expect(states).toEqual(resolved)
}

/** A queue state (`text:status` each), as `recordQueueStates` writes it. */
const q = (...items: string[]) => `[${items.join(',')}]`
const queued = (...texts: string[]) => texts.map((text) => `${text}:queued`)

/** A response to the page's read of the server's queue (`GET …/queue`) that lists `text`. */
const queueReadListing = (tab: Page, text: string) =>
  tab.waitForResponse(
    async (response) =>
      response.request().method() === 'GET' &&
      new URL(response.url()).pathname.endsWith('/queue') &&
      (await response.text()).includes(JSON.stringify(text)),
  )

// With `whenStopped: 'keep'` against a server that queues (next-era), the tab holding the sender
// lock hands each message to the server's queue as it is written, while the turn runs; the list
// shows the server's items, and Edit, Remove and Send now (a steer) go to the server's routes.
test.describe('next-era flavor, ?queue=keep', () => {
  test.use({ flavor: 'next-era' })

  test("three tabs write while a turn runs: each message is handed to the server's queue at once, edited, removed and steered there, the rest recorded once, in order [R-QUEUE-CLIENT-ONCE R-QUEUE-CLIENT-EDIT R-QUEUE-STEER R-QUEUE-SERVER-HANDOVER R-QUEUE-SERVER-ITEMS]", async ({
    alice,
    stack,
    gate,
    flavor,
  }) => {
    const { a, b, c, tabs, threadId } = await threeTabsOnARunningTurn(
      { alice, stack, gate, flavor },
      '/?queue=keep',
    )
    const poster = posters(tabs)
    const firstTurn = async () => (await recordedTurns(stack, flavor, threadId))?.[0]?.answer
    stack.app.holdChatPosts(true)

    // Written in two tabs while the turn runs: the sender (the first tab) POSTs each at once, held
    // here on its way (`sending` in every tab); once released, the server queues it and the POST's
    // `message-queued` reaches the sender before the server's push reaches any tab (held here:
    // the other order is the next test's), and every tab shows it `queued`, listed by the server.
    const written: string[] = []
    const handOver = async (tab: Page, text: string) => {
      await send(tab, text)
      await expect(composer(tab)).toHaveValue('')
      const held = await nextHeld(stack)
      expect(held.post.message).toBe(text)
      expect(await poster(text)).toBe(a)
      await expectQueue(tabs, [...queued(...written), `${text}:sending`])
      stack.app.holdPush(true)
      held.release()
      await expectQueue(tabs, queued(...written, text))
      stack.app.holdPush(false)
      written.push(text)
      await expect.poll(() => serverQueue(stack, threadId)).toEqual(written)
      // The gate has not opened: the first turn still runs.
      expect(await firstTurn()).toBe('running')
      return held.post
    }
    const one = await handOver(b, 'one from B')
    const two = await handOver(a, 'two from A')
    const three = await handOver(b, 'three from B')
    const four = await handOver(a, 'four from A')
    for (const tab of tabs) await expect(tab.getByTestId('message-user')).toHaveCount(1)

    // Edited in the third tab: the server's item changes, and every tab shows it.
    await queuedItem(c, 'three from B').getByRole('button', { name: 'Edit' }).click()
    const editor = c.getByRole('textbox', { name: 'Edit queued message' })
    const threeEdited = 'three from B edited in C'
    await editor.fill(threeEdited)
    await editor.press('Enter')
    const edited = ['one from B', 'two from A', threeEdited, 'four from A']
    await expectQueue(tabs, queued(...edited))
    await expect.poll(() => serverQueue(stack, threadId)).toEqual(edited)

    // Removed in the second tab: gone from the server's queue.
    await queuedItem(b, 'two from A').getByRole('button', { name: 'Remove' }).click()
    const kept = ['one from B', threeEdited, 'four from A']
    await expectQueue(tabs, queued(...kept))
    await expect.poll(() => serverQueue(stack, threadId)).toEqual(kept)

    // "Send now" in the first tab while the turn runs: a steer, shown first in every tab until the
    // agent's next pause takes it into the running turn.
    await queuedItem(a, 'four from A').getByRole('button', { name: 'Send now' }).click()
    const rest = ['one from B', threeEdited]
    await expectQueue(tabs, ['four from A:steering', ...queued(...rest)])
    for (const tab of tabs)
      await expect(queuedItem(tab, 'four from A')).toContainText('Joining the running turn…')
    await expect.poll(() => serverQueue(stack, threadId)).toEqual(['four from A:steering', ...rest])
    gate.shutAfter(1) // the pause held now goes through; the next one lets the steer in, and holds
    await expectQueue(tabs, queued(...rest))
    await expect.poll(() => serverQueue(stack, threadId)).toEqual(rest)
    // Recorded as a message of the running turn's execution, which still runs.
    const userMessages = async () =>
      ((await recordedMessages(stack, flavor, threadId)) ?? [])
        .filter((message) => message.role === 'user')
        .map((message) => [textOf(message), message.executionId, message.executionStatus])
    const [[, execution] = []] = await userMessages()
    await expect.poll(userMessages).toEqual([
      ['/long 60', execution, 'running'],
      ['four from A', execution, 'running'],
    ])
    for (const tab of tabs) {
      await expect.poll(() => userTexts(tab)).toEqual(['/long 60', 'four from A'])
      await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'running')
    }

    // The gate opens: the turn ends, and the server takes up what it holds, in order.
    gate.open()
    const recorded = ['/long 60', 'four from A', ...rest]
    for (const tab of tabs) {
      await expect(queueList(tab)).toHaveCount(0)
      await expect(tab.getByTestId('message-user')).toHaveCount(recorded.length)
      await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'success')
      await expect(status(tab)).toHaveAttribute('data-status', 'idle')
      expect(await userTexts(tab)).toEqual(recorded)
    }
    expect(await serverQueue(stack, threadId)).toEqual([])

    // The record: each message once, in order, under the id of its one POST; the removed one never.
    const first = stack.app.chatPosts[0]
    expect(await recordedTurns(stack, flavor, threadId)).toEqual([
      { text: '/long 60', messageId: first?.messageId, answer: 'success' },
      { text: 'four from A', messageId: four.messageId, answer: 'success' },
      { text: 'one from B', messageId: one.messageId, answer: 'success' },
      { text: threeEdited, messageId: three.messageId, answer: 'success' },
    ])
    // The POSTs (still held, had there been one more): each message's once, each reached the
    // server, each with its own id.
    expect(stack.app.chatPosts.map((post) => [post.message, post.reached])).toEqual([
      ['/long 60', true],
      ['one from B', true],
      ['two from A', true],
      ['three from B', true],
      ['four from A', true],
    ])
    const ids = stack.app.chatPosts.map((post) => post.messageId)
    expect(new Set(ids).size).toBe(5)
    expect(ids).toContain(two.messageId)

    // What each tab showed, in order. A message is `queued` in the tab that wrote it, and in the
    // sender, which reads it from the store before it marks it `sending` (where the writer is the
    // sender, both are one write); the third tab may read it only once marked.
    const handedOver = (tab: Page, writer: Page, before: string[], text: string) => [
      ...(tab === writer || tab === a
        ? [q(...queued(...before, text))]
        : writer === a
          ? []
          : [{ maybe: q(...queued(...before, text)) }]),
      q(...queued(...before), `${text}:sending`),
      q(...queued(...before, text)),
    ]
    const shown = (tab: Page) => [
      q(),
      ...handedOver(tab, b, [], 'one from B'),
      ...handedOver(tab, a, ['one from B'], 'two from A'),
      ...handedOver(tab, b, ['one from B', 'two from A'], 'three from B'),
      ...handedOver(tab, a, ['one from B', 'two from A', 'three from B'], 'four from A'),
      ...(tab === c ? [q(...queued('one from B', 'two from A', '(editing)', 'four from A'))] : []),
      q(...queued(...edited)),
      q(...queued(...kept)),
      q('four from A:steering', ...queued(...rest)),
      q(...queued(...rest)),
      q(...queued(threeEdited)),
      q(),
    ]
    for (const tab of tabs) expectStates(await queueStates(tab), shown(tab))
  })

  // The server's push (`agentMessageQueueUpdated`) and the POST's `message-queued` leave the
  // server together; here the push reaches the tabs first (the POST's answer held on its way).
  test("a message the server queued is shown once while the sender still waits for the POST's answer [R-QUEUE-CLIENT R-QUEUE-SERVER-HANDOVER]", async ({
    alice,
    stack,
    gate,
    flavor,
  }) => {
    const { tabs, b, threadId } = await threeTabsOnARunningTurn(
      { alice, stack, gate, flavor },
      '/?queue=keep',
    )
    stack.app.holdChatAnswers(true)
    const reads = tabs.map((tab) => queueReadListing(tab, 'one from B'))
    await send(b, 'one from B')
    const held = await stack.app.nextHeldAnswer()
    expect(held.post.message).toBe('one from B')
    expect(await serverQueue(stack, threadId)).toEqual(['one from B'])
    // Every tab heard the push and read the server's queue, which lists the message: each shows
    // it once, being sent or queued.
    await Promise.all(reads)
    for (const tab of tabs)
      await expect
        .poll(() => tab.evaluate(() => (window as unknown as QueueProbe).__queue.describe()))
        .toMatch(/^\[one from B:(sending|queued)\]$/)
    held.release()
    await expectQueue(tabs, ['one from B:queued'])
    for (const tab of tabs) {
      const states = await queueStates(tab)
      // Never twice in one list.
      expect(states.filter((state) => state.split('one from B').length > 2)).toEqual([])
      expect(states.at(-1)).toBe(q('one from B:queued'))
    }
  })
})

// --- the gate: the released n8n 2.41 ----------------------------------------------------------

test.describe('n8n-2.41 flavor', () => {
  test.use({ flavor: 'n8n-2.41' })

  test('gate only, as the platform allows: what two tabs write while a turn runs stays in their drafts with Send disabled, through a reload and Stop, and is sent after: each recorded once, in order [R-GATE-RUNNING R-DRAFT-KEPT R-N8N-STOP-BY-CLOSING]', async ({
    alice,
    stack,
    gate,
    flavor,
  }) => {
    const { a, b, tabs, threadId } = await threeTabsOnARunningTurn(
      { alice, stack, gate, flavor },
      '/?server=n8n-2.41',
    )

    // Written in two tabs while the turn runs: Enter sends nothing, the draft stays.
    for (const [tab, text] of [
      [b, 'one from B'],
      [a, 'two from A'],
    ] as const) {
      await send(tab, text)
      await expect(sendButton(tab)).toBeDisabled()
      await expect(composer(tab)).toHaveValue(text)
    }
    for (const tab of tabs) await expect(tab.getByTestId('queue')).toHaveCount(0)

    // A reload keeps the tab's draft; the turn is still running there, so Send still waits.
    await b.reload()
    await expect(status(b)).toHaveAttribute('data-status', 'following')
    await expect(composer(b)).toHaveValue('one from B')
    await expect(sendButton(b)).toBeDisabled()

    // Stop, pressed once in the tab that sent the turn (the only one that can stop it here).
    await expect(stopButton(b)).toHaveCount(0)
    await stopButton(a).click()
    for (const tab of tabs) {
      await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'cancelled')
      await expect(status(tab)).toHaveAttribute('data-status', 'idle')
    }
    await expect(sendButton(b)).toBeEnabled()
    await expect(sendButton(a)).toBeEnabled()

    // Sent after, in the order written. From the moment B posts, A's Send waits again.
    stack.app.holdChatPosts(true)
    gate.shutAfter(0)
    await sendButton(b).click()
    const one = await nextHeld(stack)
    expect(one.post.message).toBe('one from B')
    await expect(status(b)).toHaveAttribute('data-status', 'submitting')
    await expect(sendButton(a)).toBeDisabled()
    await expect(composer(a)).toHaveValue('two from A')
    one.release()
    await expect(status(b)).toHaveAttribute('data-status', 'streaming')
    await expect(composer(b)).toHaveValue('')
    await expect(sendButton(a)).toBeDisabled()
    gate.open()
    await expect(lastAnswer(a)).toHaveAttribute('data-execution-status', 'success')
    await expect(sendButton(a)).toBeEnabled()
    await sendButton(a).click()
    const two = await nextHeld(stack)
    expect(two.post.message).toBe('two from A')
    await expect(sendButton(b)).toBeDisabled()
    two.release()
    for (const tab of tabs) {
      await expect(tab.getByTestId('message-user')).toHaveCount(3)
      await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'success')
      await expect(status(tab)).toHaveAttribute('data-status', 'idle')
    }

    // The record (no message ids on this platform): each message once, in order.
    const turns = (await recordedTurns(stack, flavor, threadId)) ?? []
    expect(turns.map(({ text, answer }) => [text, answer])).toEqual([
      ['/long 60', 'cancelled'],
      ['one from B', 'success'],
      ['two from A', 'success'],
    ])
    expect(stack.app.chatPosts.map((post) => [post.message, post.reached])).toEqual([
      ['/long 60', true],
      ['one from B', true],
      ['two from A', true],
    ])
  })

  test('with ?queue=1, a message whose tab closed mid-send is never sent again by guess: "Not delivered", its error shown, until the person sends it now [R-QUEUE-CLIENT-ORPHAN]', async ({
    alice,
    stack,
    gate,
    flavor,
  }) => {
    test.setTimeout(closingATab)
    const { b, c, tabs, threadId } = await threeTabsOnARunningTurn(
      { alice, stack, gate, flavor },
      '/?server=n8n-2.41&queue=1',
    )
    const poster = posters(tabs)
    await send(b, 'one from B')
    await expectQueue(tabs, ['one from B:queued'])
    stack.app.holdChatPosts(true)
    gate.open()
    const lost = await nextHeld(stack)
    await expectQueue(tabs, ['one from B:sending'])
    const closed = await poster('one from B')
    const stay = tabs.filter((tab) => tab !== closed)
    await closed.close()
    await lost.dropped

    // This server records no message id and runs a second copy: the next sender does not guess.
    await expectQueue(stay, ['one from B:undelivered'])
    for (const tab of stay)
      await expect(queuedItem(tab, 'one from B').getByRole('alert')).toContainText(
        'it may have been sent',
      )
    const person = stay.find((tab) => tab !== c) ?? c
    await expectNoAxeViolations(person)
    expect(stack.app.chatPosts.map((post) => post.message)).toEqual(['/long 60', 'one from B'])

    // The person looks at the conversation, and sends it now.
    await queuedItem(person, 'one from B').getByRole('button', { name: 'Send now' }).click()
    const again = await nextHeld(stack, 45_000)
    expect(again.post.message).toBe('one from B')
    again.release()
    for (const tab of stay) {
      await expect(queueList(tab)).toHaveCount(0)
      await expect(tab.getByTestId('message-user')).toHaveCount(2)
      await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'success')
    }
    const turns = (await recordedTurns(stack, flavor, threadId)) ?? []
    expect(turns.map(({ text, answer }) => [text, answer])).toEqual([
      ['/long 60', 'success'],
      ['one from B', 'success'],
    ])
    expect(stack.app.chatPosts.map((post) => [post.message, post.reached])).toEqual([
      ['/long 60', true],
      ['one from B', false],
      ['one from B', true],
    ])
  })
})
