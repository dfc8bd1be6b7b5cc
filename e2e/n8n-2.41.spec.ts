// The example app against the reference server emulating the released n8n 2.41 (`--flavor
// n8n-2.41`): what a person sees where a closed connection cancels the turn and there is no Stop by
// execution id. The app runs with `?server=n8n-2.41` (n8n-auth cookie, browser-id, pushRef).
import type { BrowserContext } from '@playwright/test'
import type { PreviewChatServer } from '@preview-chat/server/node'
import {
  test as base,
  composer,
  expect,
  lastAnswer,
  send,
  startStack,
  status,
  stopButton,
  type Stack,
} from './fixtures'

/** The shared fixtures (alice, the gate) on a stack of the n8n-2.41 flavor. */
const test = base.extend<object, { stack: Stack }>({
  stack: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const stack = await startStack({ flavor: 'n8n-2.41' })
      await use(stack)
      await stack.close()
    },
    { scope: 'worker' },
  ],
})

const posts = (server: PreviewChatServer) =>
  server.backend.inspect.countRequests({ route: 'chat', method: 'POST' })

/**
 * A page of the app in n8n mode whose long answer is under way, held there until it is cancelled;
 * the POSTs counted before it.
 */
async function longTurnUnderWay(context: BrowserContext, { server, gate }: Stack) {
  const page = await context.newPage()
  await page.goto('/?server=n8n-2.41')
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  const before = posts(server)
  await send(page, '/long 400')
  await expect(lastAnswer(page)).toContainText('delta 5.')
  gate.hold()
  return { page, before }
}

test('n8n 2.41: a turn streams; the app then says what this server does on a reload [R-N8N-LEARNS R-N8N-NO-STARTED]', async ({
  alice,
  gate,
}) => {
  const page = await alice.newPage()
  await page.goto('/?server=n8n-2.41')
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  gate.shutAfter(5) // streaming until the page has shown it
  await send(page, '/long 40')
  await expect(status(page)).toHaveAttribute('data-status', 'streaming')
  gate.open()
  await expect(lastAnswer(page)).toContainText('delta 40.')
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'success')
  await expect(page.getByTestId('server-note')).toContainText(
    'This server cancels a turn when its page reloads',
  )
})

test('n8n 2.41: Stop in the tab that sent the message cancels the turn; another tab cannot stop it [R-N8N-STOP-BY-CLOSING R-N8N-STOP-OTHER-TAB]', async ({
  alice,
  stack,
}) => {
  const { page, before } = await longTurnUnderWay(alice, stack)

  const second = await alice.newPage()
  await second.goto(page.url())
  await expect(status(second)).toHaveAttribute('data-status', 'following')
  // Only the tab holding the turn's stream can stop it here.
  await expect(stopButton(second)).toHaveCount(0)
  await expect(composer(second)).toBeEnabled()

  await stopButton(page).click()
  for (const tab of [page, second]) {
    await expect(lastAnswer(tab)).toHaveAttribute('data-execution-status', 'cancelled')
    await expect(status(tab)).toHaveAttribute('data-status', 'idle')
  }
  expect(posts(stack.server)).toBe(before + 1)
})

test('n8n 2.41: a reload mid-answer cancels the turn there; the reloaded page shows it cancelled, sent once [R-N8N-RELOAD-CANCELS R-POST-ONCE]', async ({
  alice,
  stack,
}) => {
  const { page, before } = await longTurnUnderWay(alice, stack)
  await page.reload()
  await expect(lastAnswer(page)).toHaveAttribute('data-execution-status', 'cancelled')
  await expect(lastAnswer(page).getByRole('note')).toHaveText('Stopped — the answer ends here.')
  await expect(status(page)).toHaveAttribute('data-status', 'idle')
  expect(posts(stack.server)).toBe(before + 1)
})
