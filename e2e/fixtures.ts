import AxeBuilder from '@axe-core/playwright'
import {
  test as base,
  expect,
  type Browser,
  type BrowserContext,
  type Page,
} from '@playwright/test'
import type { Sleep } from '@preview-chat/server'
import {
  startPreviewChatServer,
  type PreviewChatServer,
  type StartPreviewChatServerOptions,
} from '@preview-chat/server/node'
import { fileURLToPath } from 'node:url'
import { startAppServer, type AppServer } from './app-server'

/** The reference server (fast pacing) and the built app in front of it, one per worker. */
export interface Stack {
  server: PreviewChatServer
  app: AppServer
  /** Every pause of the server's agent: a test holds a turn mid-answer for as long as it needs. */
  gate: AgentGate
  close(): Promise<void>
}

const appRoot = fileURLToPath(new URL('../examples/chat-app/dist', import.meta.url))

/** Text deltas are 25 ms apart: `/long 200` streams for about five seconds. */
export const deltaMs = 25

/**
 * The agent's pauses under the test's hand. Open, each pause lasts its `ms` as on the platform;
 * shut, the agent holds at its next pause until the test lets it go on, and a Stop (or a closed
 * connection, on a flavor that cancels then) still ends it. A test that asserts what a person sees
 * mid-answer — a reload, a second tab, a drop — holds the turn first: the state lasts until the
 * test moves on, however slow the machine (a turn of `/long 200` is over in five seconds).
 */
export interface AgentGate {
  /** What the server's agent sleeps on (`StartPreviewChatServerOptions.sleep`). */
  readonly sleep: Sleep
  /** Holds every turn at its next pause. */
  hold(): void
  /** Lets `pauses` more pauses through (in the order they came), then holds. */
  shutAfter(pauses: number): void
  /** Lets every pause through, held or to come, each after its `ms`. */
  open(): void
}

export function agentGate(): AgentGate {
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
    hold() {
      budget = 0
    },
    shutAfter(pauses) {
      budget = pauses
      release()
    },
    open() {
      budget = Infinity
      release()
    },
  }
}

/** A reference server (of another flavor) paced by a gate of its own, and the app before it. */
export async function startStack(
  options: Pick<StartPreviewChatServerOptions, 'flavor'> = {},
): Promise<Stack> {
  const gate = agentGate()
  const server = await startPreviewChatServer({
    dev: true,
    port: 0,
    deltaMs,
    snapshotMs: 100,
    sleep: gate.sleep,
    ...options,
  })
  const app = await startAppServer({ root: appRoot, target: server.url })
  return {
    server,
    app,
    gate,
    async close() {
      await app.close()
      await server.close()
    },
  }
}

export const test = base.extend<
  {
    alice: BrowserContext
    newContext: (user: string) => Promise<BrowserContext>
    /** The worker's stack's gate, open when each test starts and after it ends. */
    gate: AgentGate
  },
  { stack: Stack }
>({
  stack: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const stack = await startStack()
      await use(stack)
      await stack.close()
    },
    { scope: 'worker' },
  ],
  gate: [
    async ({ stack }, use) => {
      stack.gate.open()
      await use(stack.gate)
      stack.gate.open()
    },
    { auto: true },
  ],
  newContext: async ({ browser, stack }, use) => {
    const contexts: BrowserContext[] = []
    await use(async (user) => {
      const context = await openContext(browser, stack, user)
      contexts.push(context)
      return context
    })
    // (`screenshot: 'only-on-failure'` in the config saves every page of these contexts.)
    for (const context of contexts) await context.close()
  },
  alice: async ({ newContext }, use) => {
    await use(await newContext('alice'))
  },
})

/** A browser profile of `user` on the app (its tabs share localStorage and Web Locks). */
export async function openContext(browser: Browser, stack: Pick<Stack, 'app'>, user: string) {
  const context = await browser.newContext({ baseURL: stack.app.url })
  await context.addCookies([{ name: 'preview-chat-user', value: user, url: stack.app.url }])
  return context
}

export { expect }

// --- what a person sees -------------------------------------------------------------------

/** A page of the app on a fresh thread (the app mints it); returns its thread URL. */
export async function openNewThread(page: Page, path = '/'): Promise<string> {
  await page.goto(path)
  await expect(page).toHaveURL(/[?&]thread=/)
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  return page.url()
}

export const composer = (page: Page) => page.getByRole('textbox', { name: 'Message' })
export const sendButton = (page: Page) => page.getByRole('button', { name: 'Send' })
export const stopButton = (page: Page) => page.getByRole('button', { name: 'Stop' })
export const status = (page: Page) => page.getByTestId('status')
export const lastAnswer = (page: Page) => page.getByTestId('message-assistant').last()

export async function send(page: Page, text: string): Promise<void> {
  await composer(page).fill(text)
  await composer(page).press('Enter')
}

/** The text of the last answer (its text parts), as rendered. */
export async function answerText(page: Page): Promise<string> {
  const parts = await lastAnswer(page).locator('.part-text').allTextContents()
  return parts.join('')
}

export function threadIdOf(url: string): string {
  const id = new URL(url).searchParams.get('thread')
  if (!id) throw new Error(`No thread id in ${url}`)
  return id
}

/** axe finds nothing on the page as it is now (no rule turned off). */
export async function expectNoAxeViolations(page: Page): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze()
  expect(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' | ')}`)).toEqual([])
}
