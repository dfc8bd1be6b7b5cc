// src/App.test.tsx: Getting started's App (./App.tsx) against the real reference backend, in
// msw's Node server. Needs vitest.config.ts (the jsdom environment) beside it.
import { setupPreviewChatServer } from '@preview-chat/msw/vitest'
import { createPreviewChatClient } from '@preview-chat/react'
import { QueryClient } from '@tanstack/react-query'
import { fireEvent, render, screen } from '@testing-library/react'
import { expect, it } from 'vitest'
import { App } from './App'

// Starts msw's server before the file's tests, resets the scenario controls after each (and
// unmounts what they rendered), closes it after all. Words without delay: the test runs fast.
const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })

/** The App as its entry renders it, with its clients: alice, against msw's backend. */
function renderApp(headers: Record<string, string> = { authorization: 'Bearer alice' }) {
  const client = createPreviewChatClient({ baseUrl: 'http://localhost/rest', headers })
  render(
    <App client={client} queryClient={new QueryClient()} threadId={crypto.randomUUID()} isNew />,
  )
}

async function send(text: string) {
  fireEvent.change(screen.getByLabelText('Message'), { target: { value: text } })
  fireEvent.click(await screen.findByRole('button', { name: 'Send' }))
}

it('shows the whole answer after its stream was cut, and sends the message once', async () => {
  renderApp()
  void chat.mock.cutNextStream({ afterEvents: 2 }) // the client's copy of the turn ends early
  await send('Hello there')
  await screen.findByText(/You said \(2 words\): "Hello there"/, {}, { timeout: 10_000 })
  expect(chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(1)
})

it('says what failed when the server refuses the user, and keeps the draft', async () => {
  renderApp({ authorization: 'Bearer mallory' }) // no such user: 401
  await send('Hello there')
  expect(await screen.findByRole('alert', {}, { timeout: 10_000 })).toBeTruthy()
  expect(screen.getByLabelText<HTMLTextAreaElement>('Message').value).toBe('Hello there')
})
