// The runtime in assistant-ui's own primitives, against the MSW-mounted reference backend: what a
// person sees of each kind of turn, loading, the gate, Stop, a suspension answered, a refetch.
import type { AssistantRuntime } from '@assistant-ui/react'
import { persistTranscripts } from '@preview-chat/react/persist'
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { answers, input, lastAnswer, mountChat, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })
const posts = () => chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })
const type = (text: string) => fireEvent.change(input(), { target: { value: text } })
const send = () => fireEvent.click(screen.getByText('Send'))

describe('a turn', () => {
  it('renders the whole answer: reasoning, the tool call with its result, the text', async () => {
    mountChat({ ...thread(), isNew: true })
    type('Hello there')
    send()

    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    const answer = lastAnswer()
    expect(answer.querySelector('.reasoning')?.textContent).toContain('I count its words')
    expect(within(answer).getByTestId('tool-word_count').textContent).toContain(
      'word_count = {"words":2}',
    )
    expect(within(answer).getByTestId('tool-word_count').getAttribute('data-status')).toBe(
      'complete',
    )
    expect(answer.textContent).toContain('You said (2 words): "Hello there"')
    expect(screen.getByTestId('message-user').textContent).toContain('Hello there')
    expect(posts()).toBe(1)
    expect(input().value).toBe('')
  })

  it('an agent error is incomplete, with its recorded message', async () => {
    mountChat({ ...thread(), isNew: true })
    type('/fail')
    send()
    await waitFor(() => expect(lastAnswer().getAttribute('data-reason')).toBe('error'))
    expect(lastAnswer().getAttribute('data-status')).toBe('incomplete')
    expect(within(lastAnswer()).getByRole('alert').textContent).not.toBe('')
  })

  it("a delegation shows its child's trace nested in the tool call, truncated as recorded", async () => {
    const { key } = await chat.mock.seed.truncatedDelegation({ chars: 5000 })
    mountChat(key)
    const tool = await screen.findByTestId('tool-delegate', {}, { timeout: 10_000 })
    const child = within(tool).getByTestId('child')
    const nested = within(child).getByTestId('message-assistant')
    expect(nested.getAttribute('data-status')).toBe('incomplete')
    expect(nested.getAttribute('data-reason')).toBe('length')
    expect(nested.querySelector('.reasoning')?.textContent).toMatch(/^r+$/)
    expect(within(nested).getByTestId('tool-search').getAttribute('data-status')).toBe('complete')
    expect(nested.querySelector('.text')?.textContent).toMatch(/^t+$/)
  })
})

describe('loading', () => {
  const isLoading = (runtime: () => AssistantRuntime) => runtime().thread.getState().isLoading

  it('a thread not read yet is loading until its read answers [R-LOADED-NOT-EMPTY]', async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    chat.mock.delayReads(100)
    const { runtime } = mountChat(key)
    expect(isLoading(runtime)).toBe(true)
    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    expect(isLoading(runtime)).toBe(false)
  })

  it('a transcript restored after a reload is not loading, before any read answers [R-LOADED-NOT-EMPTY]', async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    const storage = new Map<string, string>()
    const persist = () =>
      persistTranscripts({
        throttleMs: 0,
        storage: {
          getItem: (k) => storage.get(k) ?? null,
          setItem: (k, value) => void storage.set(k, value),
          removeItem: (k) => void storage.delete(k),
        },
      })
    const first = mountChat(key, tabClient('alice', { persist: persist() }))
    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    await waitFor(() => expect(storage.size).toBeGreaterThan(0))
    first.view.unmount()
    await act(() => new Promise((resolve) => setTimeout(resolve, 40))) // past the linger

    // The next page: its read is slow, the kept transcript is on screen at once.
    chat.mock.delayReads(200)
    const { runtime, session } = mountChat(key, tabClient('alice', { persist: persist() }))
    expect(session(key).getState()).toMatchObject({ status: 'recovering', lastSyncedAt: null })
    expect(isLoading(runtime)).toBe(false)
    expect(answers()).toHaveLength(1)
  })
})

describe('the gate', () => {
  it('blocks sending while a turn runs, keeps the composer editable, and sends after it', async () => {
    const { key, turn } = await chat.mock.seed.runningTurn({ steps: 1 })
    const { runtime } = mountChat(key)
    await waitFor(() => expect(screen.getByTestId('running').textContent).toContain('true'))
    const before = posts()

    type('Are you done?')
    expect(input().disabled).toBe(false)
    expect((screen.getByText('Send') as HTMLButtonElement).disabled).toBe(true)
    runtime().thread.composer.send() // what Enter does: a no-op while sending is disabled
    fireEvent.keyDown(input(), { key: 'Enter' })
    expect(input().value).toBe('Are you done?')
    expect(posts()).toBe(before)

    turn.release()
    await waitFor(() =>
      expect((screen.getByText('Send') as HTMLButtonElement).disabled).toBe(false),
    )
    // The kit's running flag is its own render of the same state: it may come a render later.
    await waitFor(() => expect(screen.getByTestId('running').textContent).toContain('false'))
    send()
    await waitFor(() => expect(answers()).toHaveLength(2))
    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    expect(posts()).toBe(before + 1)
  })
})

describe('Stop', () => {
  it('stops the running turn: the answer ends cancelled', async () => {
    const turn = chat.mock.holdTurns()
    mountChat({ ...thread(), isNew: true })
    type('/long 50')
    send()
    await turn.step(2)
    await waitFor(() => expect(lastAnswer().textContent).toContain('delta 1.'))
    expect((screen.getByText('Stop') as HTMLButtonElement).disabled).toBe(false)

    fireEvent.click(screen.getByText('Stop'))
    await waitFor(() => expect(lastAnswer().getAttribute('data-reason')).toBe('cancelled'))
    expect(lastAnswer().getAttribute('data-status')).toBe('incomplete')
    expect(lastAnswer().textContent).not.toContain('delta 50.')
    expect(chat.mock.backend.inspect.countRequests({ method: 'DELETE' })).toBe(1)
    await waitFor(() => expect(screen.getByTestId('running').textContent).toContain('false'))
  })
})

describe('a suspension', () => {
  it('shows the call as requiring action, and Approve resumes it', async () => {
    const { key } = await chat.mock.seed.suspension()
    mountChat(key)
    const tool = await screen.findByTestId('tool-request_approval', {}, { timeout: 10_000 })
    expect(tool.getAttribute('data-status')).toBe('requires-action')
    expect(lastAnswer().getAttribute('data-status')).toBe('requires-action')
    expect(lastAnswer().getAttribute('data-reason')).toBe('interrupt')

    fireEvent.click(within(tool).getByText('Approve'))
    // The resumed turn is a new execution: its answer carries the call's result.
    await waitFor(() => expect(answers()).toHaveLength(2), { timeout: 10_000 })
    await waitFor(() =>
      expect(within(lastAnswer()).getByTestId('tool-request_approval').textContent).toContain(
        '{"approved":true,"sent":true}',
      ),
    )
    await waitFor(() => expect(screen.queryByText('Approve')).toBeNull(), { timeout: 10_000 })
    expect(chat.mock.backend.inspect.countRequests({ route: 'resume', method: 'POST' })).toBe(1)
    await waitFor(() => expect(screen.getByTestId('running').textContent).toContain('false'))
  })
})

describe('refetch', () => {
  it("the kit's reloadMainThread() is one history read", async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    const { runtime, session } = mountChat(key)
    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    // Settled first: the read that follows the push channel's connect (which may come after the
    // first read on a loaded machine) is not the reload's.
    await waitFor(() => {
      const { push, reads } = session(key).getEngineState()
      expect({ connected: push.connected, inFlight: reads.inFlight, wanted: reads.wanted }).toEqual(
        {
          connected: true,
          inFlight: false,
          wanted: false,
        },
      )
    })
    const reads = () =>
      chat.mock.backend.inspect.countRequests({ route: 'messages', method: 'GET' })
    const before = reads()
    expect(runtime().thread.getState().capabilities.refetchThread).toBe(true)
    await runtime().threads.reloadMainThread()
    expect(reads()).toBe(before + 1)
  })
})
