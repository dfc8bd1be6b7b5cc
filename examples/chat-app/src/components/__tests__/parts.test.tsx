// Row 16 of issue 28: an answered suspension, as the example app shows it. The first turn's call
// keeps neither `state` nor `suspendPayload` once it was answered; reading `state` alone showed
// it "running…" for ever. Every state of the session is rendered, from the wait to the end.
import { createPreviewChatClient, type SessionState } from '@preview-chat/core'
import { setupPreviewChatServer } from '@preview-chat/msw/vitest'
import { renderToStaticMarkup } from 'react-dom/server'
import { describe, expect, it, onTestFinished } from 'vitest'
import { MessageView } from '../Message'

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })

/** What each message's tool calls say in the app, e.g. `['waiting for approval']`. */
function toolStates(state: SessionState): string[][] {
  return state.messages
    .filter((message) => message.role === 'assistant')
    .map((message) => {
      const html = renderToStaticMarkup(
        <MessageView message={message} suspensions={state.openSuspensions} />,
      )
      return [...html.matchAll(/<span class="tool-state">([^<]*)<\/span>/g)].map((m) => m[1]!)
    })
}

describe('the chat-app: an answered suspension', () => {
  it('reads waiting, then answered in its finished message and done in the next, never running', async () => {
    const suspended = await chat.mock.seed.suspension()
    const client = createPreviewChatClient({
      baseUrl: 'http://localhost/rest',
      headers: { authorization: 'Bearer alice' },
      relay: false,
      lingerMs: 0,
    })
    const session = client.session(suspended.key)
    const seen: string[][][] = []
    onTestFinished(session.subscribe((state) => seen.push(toolStates(state))))
    await expect.poll(() => session.getState().openSuspensions.length, { timeout: 10_000 }).toBe(1)
    expect(toolStates(session.getState())).toEqual([['waiting for approval']])

    expect((await session.resume(suspended, { approved: true })).outcome).toBe('accepted')
    await expect
      .poll(() => toolStates(session.getState()), { timeout: 10_000 })
      .toEqual([['answered'], ['done']])
    // On the way, the first call was waiting or answered: at no state "running…".
    expect(new Set(seen.map((messages) => messages[0]?.[0]))).toEqual(
      new Set(['waiting for approval', 'answered']),
    )
  })
})
