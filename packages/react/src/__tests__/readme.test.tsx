/**
 * The React example of packages/msw/README.md, run as a test; the last test checks that the README
 * shows it verbatim.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setupPreviewChatServer } from '@preview-chat/msw/vitest'
import { fireEvent, render, screen } from '@testing-library/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { expect, it } from 'vitest'
import { createPreviewChatClient, PreviewChatProvider, usePreviewChat } from '../index'

// #region example: react
const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })

function Chat({ threadId }: { threadId: string }) {
  const state = usePreviewChat({ projectId: 'p', agentId: 'a', threadId, isNew: true })
  const text = (parts: (typeof state.messages)[number]['content']) =>
    parts.map((part) => (part.type === 'text' ? part.text : '')).join('')
  return (
    <>
      {state.messages.map((message) => (
        <p key={message.id}>{text(message.content)}</p>
      ))}
      <textarea
        aria-label="Message"
        value={state.draft}
        onChange={(e) => state.setDraft(e.target.value)}
      />
      <button disabled={!state.canSubmit} onClick={() => void state.submit()}>
        Send
      </button>
    </>
  )
}

it('shows the whole answer after the stream was cut, and sends the message once', async () => {
  const client = createPreviewChatClient({
    baseUrl: 'http://localhost/rest',
    headers: { authorization: 'Bearer alice' }, // and so push over SSE, which carries them
  })
  render(
    <QueryClientProvider client={new QueryClient()}>
      <PreviewChatProvider client={client}>
        <Chat threadId={crypto.randomUUID()} />
      </PreviewChatProvider>
    </QueryClientProvider>,
  )
  void chat.mock.cutNextStream({ afterEvents: 2 }) // the client's copy ends mid-turn
  fireEvent.change(screen.getByLabelText('Message'), { target: { value: 'Hello there' } })
  fireEvent.click(screen.getByText('Send'))

  await screen.findByText('You said (2 words): "Hello there"', {}, { timeout: 10_000 })
  expect(chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(1)
})
// #endregion

it('is shown verbatim in packages/msw/README.md [R-MSW-README-RUNS]', () => {
  const here = readFileSync(import.meta.filename, 'utf8')
  const region = /\/\/ #region example: react\n([\s\S]*?)\n\/\/ #endregion/.exec(here)?.[1] ?? ''
  const readme = readFileSync(join(import.meta.dirname, '../../../msw/README.md'), 'utf8')
  const imports = `import { createPreviewChatClient, PreviewChatProvider, usePreviewChat } from '@preview-chat/react'`
  expect(region.length).toBeGreaterThan(500)
  expect(readme).toContain(region)
  expect(readme).toContain(imports)
})
