// Issue 29's "Done when", in Chromium: three tabs of one user (three pages of one browser context,
// which share localStorage and Web Locks as tabs do) write while a turn runs, one reloads, one
// closes mid-send, Stop is pressed once; every message is recorded once, in the order written.
// With `?queue=1` against the spec and next-era flavors (the demo's queue), and with the gate
// against the released n8n 2.41's, which has no dedupe and no message ids. The agent's pauses wait
// on a gate the test opens, and the app server holds message POSTs: every state asserted here
// lasts until the test moves on, whatever the machine's speed.
import { test as base, expect, type BrowserContext, type Page } from '@playwright/test'
import type { FlavorName, Sleep } from '@preview-chat/server'
import { fileURLToPath } from 'node:url'
import type { HeldChatPost } from './app-server'
import {
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

/**
 * Every pause of the agent: paced as in the other specs while the gate lets it through, held
 * while it is shut (a Stop still ends it). `shutAfter(n)`: n more pauses go through, then it holds.
 */
function agentGate() {
  let budget = Infinity
  const held = new Set<() => void>()
  const release = () => {
    for (const go of [...held]) if (budget > 0) go()
  }
  const sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const abort = () => {
        held.delete(go)
        clearTimeout(timer)
        reject(signal.reason as Error)
      }
      function go() {
        held.delete(go)
        budget--
        timer = setTimeout(() => {
          signal.removeEventListener('abort', abort)
          resolve()
        }, ms)
      }
      if (signal.aborted) return reject(signal.reason as Error)
      signal.addEventListener('abort', abort, { once: true })
      held.add(go)
      release()
    })
  return {
    sleep,
    shutAfter(pauses: number) {
      budget = pauses
      release()
    },
    open() {
      budget = Infinity
      release()
    },
  }
}

const test = base.extend<{
  flavor: FlavorName
  gate: ReturnType<typeof agentGate>
  stack: Stack
  alice: BrowserContext
}>({
  flavor: ['spec', { option: true }],
  // eslint-disable-next-line no-empty-pattern
  gate: async ({}, use) => use(agentGate()),
  stack: async ({ flavor, gate }, use) => {
    const stack = await startStack({ flavor, sleep: gate.sleep })
    await use(stack)
    await stack.close()
  },
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

/**
 * The thread's turns as its owner reads them: each user message, with its answer's status
 * (`null` while the server has no such thread).
 */
async function recordedTurns(stack: Stack, flavor: FlavorName, threadId: string) {
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
  const { data } = (await response.json()) as {
    data: {
      messages: {
        role: string
        executionId: string
        executionStatus?: string
        messageId?: string
        content: { type: string; text?: string }[]
      }[]
    }
  }
  const text = (content: { type: string; text?: string }[]) =>
    content.map((part) => (part.type === 'text' ? part.text : '')).join('')
  return data.messages
    .filter((message) => message.role === 'user')
    .map((message): RecordedTurn => ({
      text: text(message.content),
      messageId: message.messageId,
      answer: data.messages.find(
        (m) => m.role === 'assistant' && m.executionId === message.executionId,
      )?.executionStatus,
    }))
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

type Gate = ReturnType<typeof agentGate>

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
      await editor.fill('three from B edited in C')
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
