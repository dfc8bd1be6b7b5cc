// The devtools panel in a development build, as a developer meets it: a small chat page
// (packages/react/src/devtools/__tests__/page) on a Vite dev server, which sets NODE_ENV to
// 'development', so `@preview-chat/react/devtools` renders the panel; `/rest` goes to the
// reference server. The panel opens by its button, lists the session's actions as a turn runs,
// counts its reads and push messages, copies the engine state, and passes axe.
import AxeBuilder from '@axe-core/playwright'
import { expect, test } from '@playwright/test'
import { startPreviewChatServer, type PreviewChatServer } from '@preview-chat/server/node'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createServer, defaultClientConditions, type ViteDevServer } from 'vite'

const page = fileURLToPath(
  new URL('../packages/react/src/devtools/__tests__/page/', import.meta.url),
)
const results = fileURLToPath(new URL('../test-results/', import.meta.url))

let server: PreviewChatServer
let vite: ViteDevServer
let url: string

test.beforeAll(async () => {
  server = await startPreviewChatServer({ dev: true, port: 0, deltaMs: 25, snapshotMs: 100 })
  vite = await createServer({
    configFile: false,
    root: page,
    // Out of the repository (the default is `<root>/node_modules/.vite`, inside src/).
    cacheDir: join(tmpdir(), 'preview-chat-devtools-page-vite'),
    logLevel: 'error',
    mode: 'development',
    resolve: { conditions: ['@preview-chat/source', ...defaultClientConditions] },
    oxc: { jsx: { runtime: 'automatic' } },
    server: {
      host: '127.0.0.1',
      port: 0,
      proxy: { '/rest': { target: server.url, ws: true } },
    },
  })
  await vite.listen()
  url = vite.resolvedUrls?.local[0] ?? ''
})

test.afterAll(async () => {
  await vite?.close()
  await server?.close()
})

test('the panel lists a turn as it runs, counts reads and push, and copies the engine state', async ({
  browser,
}) => {
  const context = await browser.newContext()
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url })
  const tab = await context.newPage()
  await tab.goto(url)

  const toggle = tab.getByRole('button', { name: 'preview-chat devtools' })
  await expect(toggle).toHaveAttribute('aria-expanded', 'false')
  await toggle.click()
  const panel = tab.getByRole('region', { name: 'preview-chat devtools' })
  await expect(panel).toBeVisible()
  const session = panel.getByRole('article', { name: /^Thread / })
  await expect(session).toContainText('idle')

  await tab.getByLabel('Message').fill('/long 12')
  await tab.getByRole('button', { name: 'Send' }).click()
  const actions = session.getByRole('list', { name: /^Actions of Thread / })
  await expect(actions).toContainText('submit-requested')
  await expect(actions).toContainText('turn-events')
  await expect(tab.locator('output')).toHaveText('idle', { timeout: 20_000 })
  await expect(actions).toContainText('stream-ended')
  await expect(actions).toContainText('snapshot')
  // Push notifications of the recorded turn arrived, and reads followed them.
  await expect(session.getByText(/^connected, [1-9]\d* messages/)).toBeVisible()
  await expect(session.getByText(/^[1-9]\d* started, [1-9]\d* snapshots/)).toBeVisible()

  await session.getByText('Engine state').click()
  const json = session.getByLabel(/^Engine state of Thread /)
  await expect(json).toContainText('"active": true')
  await session.getByRole('button', { name: /^Copy the engine state of Thread / }).click()
  await expect(session.getByText('Copied')).toBeVisible()
  const copied = JSON.parse(await tab.evaluate(() => navigator.clipboard.readText())) as {
    key: { projectId: string }
    recorded: { messages: unknown[] }
  }
  expect(copied.key.projectId).toBe('p1')
  expect(copied.recorded.messages).toHaveLength(2)

  const { violations } = await new AxeBuilder({ page: tab })
    .include('[data-preview-chat-devtools]')
    .analyze()
  expect(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(' | ')}`)).toEqual([])
  await tab.screenshot({ path: `${results}devtools/panel.png` })
  await context.close()
})

test('at 390 px the button covers no Send, and the panel shows what ran before it was opened', async ({
  browser,
}) => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
  const tab = await context.newPage()
  await tab.goto(url)
  const toggle = tab.getByRole('button', { name: 'preview-chat devtools' })
  const send = tab.getByRole('button', { name: 'Send' })
  await expect(toggle).toBeVisible()
  const [button, sendBox] = await Promise.all([toggle.boundingBox(), send.boundingBox()])
  expect(button && sendBox && overlaps(button, sendBox)).toBe(false)

  // A turn with the panel closed: opened afterwards, it lists the turn from the devtools' mount.
  await tab.getByLabel('Message').fill('/long 3')
  await send.click()
  await expect(tab.locator('output')).toHaveText('idle', { timeout: 20_000 })
  await expect(tab.getByRole('listitem').filter({ hasText: 'assistant:' })).toHaveCount(1)
  await toggle.click()
  const session = tab
    .getByRole('region', { name: 'preview-chat devtools' })
    .getByRole('article', { name: /^Thread / })
  const actions = session.getByRole('list', { name: /^Actions of Thread / })
  await expect(actions).toContainText('submit-requested')
  await expect(actions).toContainText('stream-ended')
  await context.close()
})

interface Box {
  x: number
  y: number
  width: number
  height: number
}

/** Whether two boxes share any pixel. */
function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
}
