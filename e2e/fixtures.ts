import AxeBuilder from '@axe-core/playwright'
import {
  test as base,
  expect,
  type Browser,
  type BrowserContext,
  type Page,
} from '@playwright/test'
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
  close(): Promise<void>
}

const appRoot = fileURLToPath(new URL('../examples/chat-app/dist', import.meta.url))

/** Text deltas are 25 ms apart: `/long 200` streams for about five seconds. */
export const deltaMs = 25

/** A reference server (of another flavor, its agent paced by `sleep`) and the app before it. */
export async function startStack(
  options: Pick<StartPreviewChatServerOptions, 'flavor' | 'sleep'> = {},
): Promise<Stack> {
  const server = await startPreviewChatServer({
    dev: true,
    port: 0,
    deltaMs,
    snapshotMs: 100,
    ...options,
  })
  const app = await startAppServer({ root: appRoot, target: server.url })
  return {
    server,
    app,
    async close() {
      await app.close()
      await server.close()
    },
  }
}

export const test = base.extend<
  { alice: BrowserContext; newContext: (user: string) => Promise<BrowserContext> },
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
