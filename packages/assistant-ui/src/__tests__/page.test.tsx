// The README's complete page, as written (readme-page.tsx is the README's block), against the
// MSW-mounted reference backend with its real users: a turn, an approval answered with the
// package's tool UI, the endings the package's parts write, and a misconfigured page that says so.
import { http, HttpResponse } from 'msw'
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { beforeAll, describe, expect, it } from 'vitest'
import { App } from './readme-page'
import { setupChat } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })

// The page fetches `/rest/…` as a browser does, against its own origin; Node's fetch needs the
// origin spelled out (jsdom's location is http://localhost:3000).
beforeAll(() => {
  const fetch = globalThis.fetch
  globalThis.fetch = (input, init) =>
    fetch(
      typeof input === 'string' && input.startsWith('/') ? `http://localhost${input}` : input,
      init,
    )
})

const status = () => screen.getByTestId('preview-chat-status')
const input = () => screen.getByLabelText<HTMLTextAreaElement>('Message')
const send = async (text: string) => {
  // Send waits until the thread is known (here: a first read answering 404, a new thread).
  await waitFor(() => expect(status().getAttribute('data-status')).toBe('idle'), {
    timeout: 10_000,
  })
  fireEvent.change(input(), { target: { value: text } })
  await waitFor(() => expect((screen.getByText('Send') as HTMLButtonElement).disabled).toBe(false))
  fireEvent.click(screen.getByText('Send'))
}
const tools = (name: string) => screen.queryAllByTestId(`tool-${name}`)

describe('the README page', () => {
  it("answers as pasted, as the reference server's alice", async () => {
    render(<App threadId={crypto.randomUUID()} user="alice" />)
    await send('Hello there')
    await screen.findByText(/You said \(2 words\)/, {}, { timeout: 10_000 })
    expect(status().textContent).toBe('')
    expect(status().getAttribute('role')).toBe('status')
    expect(tools('word_count')[0]?.textContent).toContain('word_count: done')
  })

  it('shows a recovered answer as far as it got at once after a reload, not typed out again (smooth off)', async () => {
    // A turn running when the page (re)loads: 20 deltas recorded so far.
    const seeded = await chat.mock.seed.runningTurn({ message: '/long 40', steps: 20 })
    const recorded = Array.from({ length: 20 }, (_, n) => `delta ${n + 1}.`).join(' ')
    render(<App threadId={seeded.key.threadId} user="alice" />)
    // Its first text on screen is all of that: the kit's default Text (smooth on) would start from
    // the first character and type the rest out again, frame by frame.
    const first = await screen.findByText(/delta 1\./, {}, { timeout: 10_000 })
    expect(first.textContent?.trim()).toBe(recorded)
    seeded.turn.release()
  })

  it('on a thread that does not exist yet (no isNew), the status line says nothing at any moment [R-READ-404-NO-ERROR]', async () => {
    render(<App threadId={crypto.randomUUID()} user="alice" />)
    // Every text the status line shows, from its first render to the end of the first answer.
    const shown = [status().textContent]
    const observer = new MutationObserver(() => {
      if (shown.at(-1) !== status().textContent) shown.push(status().textContent)
    })
    observer.observe(status(), { childList: true, characterData: true, subtree: true })
    await send('Hello there')
    await screen.findByText(/You said \(2 words\)/, {}, { timeout: 10_000 })
    await waitFor(() => expect(status().getAttribute('data-status')).toBe('idle'))
    observer.disconnect()
    // Before issue 35 row g: "Cannot read this thread (retrying): … 404" all through the answer.
    expect(shown).toEqual([''])
  })

  it('a page whose requests name no known user says so on screen', async () => {
    render(<App threadId={crypto.randomUUID()} user="mallory" />)
    await waitFor(() => expect(status().getAttribute('role')).toBe('alert'), { timeout: 10_000 })
    expect(status().textContent).toContain('knows alice, bob and carol')
  })

  it('Approve answers the suspension; the answered call never shows as running again', async () => {
    render(<App threadId={crypto.randomUUID()} user="alice" />)
    await send('/suspend')
    const waiting = await screen.findByText(/waiting for you/, {}, { timeout: 10_000 })
    const tool = waiting.closest<HTMLElement>('[data-testid="tool-request_approval"]')!
    fireEvent.click(within(tool).getByText('Approve'))
    await waitFor(() => expect(tools('request_approval')).toHaveLength(2), { timeout: 10_000 })
    await waitFor(() => expect(tools('request_approval')[1]?.textContent).toContain('done'))
    expect(tools('request_approval')[1]?.textContent).toContain('"approved":true')
    // The first turn's call: answered (its result is in the next message), not running.
    await waitFor(
      () => expect(tools('request_approval')[0]?.textContent).toBe('request_approval: answered'),
      { timeout: 10_000 },
    )
    // Under the whole suite's load the Approve button was once still in the DOM for a render
    // after the call showed answered (2 of 3 full runs, never alone): waited for, and noted.
    await waitFor(() => expect(screen.queryByText('Approve')).toBeNull(), { timeout: 10_000 })
    expect(tools('request_approval')[0]?.textContent).toBe('request_approval: answered')
  })

  it('an answer the server refuses is said beside the buttons, which work again', async () => {
    chat.server.use(
      http.post('*/rest/projects/:p/agents/v2/:a/chat/resume', () =>
        HttpResponse.json(
          { code: 'forbidden', message: 'You may not answer this.' },
          { status: 403 },
        ),
      ),
    )
    render(<App threadId={crypto.randomUUID()} user="alice" />)
    await send('/suspend')
    const waiting = await screen.findByText(/waiting for you/, {}, { timeout: 10_000 })
    const tool = waiting.closest<HTMLElement>('[data-testid="tool-request_approval"]')!
    const approve = () => within(tool).getByText<HTMLButtonElement>('Approve')
    fireEvent.click(approve())
    expect(approve().disabled).toBe(true)
    // Beside the buttons (the status line may say it too, a render earlier): the refusal, and
    // the buttons enabled again in the same render.
    const alert = await within(tool).findByRole('alert', {}, { timeout: 10_000 })
    expect(alert.textContent).toMatch(/You may not answer this/)
    expect(approve().disabled).toBe(false)
  })

  it("writes each answer's ending: an agent's failure, a Stop", async () => {
    render(<App threadId={crypto.randomUUID()} user="alice" />)
    await send('/fail')
    const failed = await screen.findByRole('note', {}, { timeout: 10_000 })
    expect(failed.textContent).toMatch(/^The agent failed: ./)

    const turn = chat.mock.holdTurns()
    await send('/long 50')
    await turn.step(2)
    await waitFor(() =>
      expect((screen.getByText('Stop') as HTMLButtonElement).disabled).toBe(false),
    )
    fireEvent.click(screen.getByText('Stop'))
    await waitFor(() => expect(screen.getAllByRole('note').at(-1)?.textContent).toBe('Stopped'), {
      timeout: 3000,
    })
  })

  it('Enter while a turn runs does nothing to the draft', async () => {
    const turn = chat.mock.holdTurns()
    render(<App threadId={crypto.randomUUID()} user="alice" />)
    await send('/long 50')
    await turn.step(2)
    await waitFor(() => expect(status().getAttribute('data-status')).toBe('streaming'))
    fireEvent.change(input(), { target: { value: 'next question' } })
    // `false`: the key's default (a newline in the textarea) was prevented.
    expect(fireEvent.keyDown(input(), { key: 'Enter' })).toBe(false)
    expect(fireEvent.keyDown(input(), { key: 'Enter', shiftKey: true })).toBe(true)
    expect(input().value).toBe('next question')
    turn.release()
    await waitFor(() => expect(status().getAttribute('data-status')).toBe('idle'), {
      timeout: 3000,
    })
  })
})
