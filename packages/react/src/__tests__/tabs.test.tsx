import { act, render, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { createProbe, Providers, setupChat, tabClient, thread } from './harness'

// No snapshot is recorded while the turn runs (only at its start and end), so whatever the second
// tab shows mid-turn came from the first tab, over BroadcastChannel.
const chat = setupChat({ deltaMs: 1, snapshotMs: 60_000 })
const until = { timeout: 10_000 }
const textOf = (state: {
  messages: { role: string; content: { type: string; text?: string }[] }[]
}) =>
  state.messages
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => m.content.map((p) => p.text ?? ''))
    .join('')

function openTab(key: ReturnType<typeof thread>, relay: boolean) {
  const probe = createProbe()
  const client = tabClient('alice', relay ? { relay: undefined } : {})
  render(
    <Providers client={client}>
      <probe.Probe {...key} throttleMs={0} />
    </Providers>,
  )
  return probe
}

describe('other tabs of the same user follow live', () => {
  it('token by token over BroadcastChannel, with no extra reads; the record then replaces it [R-TABS-LIVE]', async () => {
    const key = thread()
    const first = openTab(key, true)
    const second = openTab(key, true)
    await waitFor(
      () => expect([first.chat().status, second.chat().status]).toEqual(['idle', 'idle']),
      until,
    )
    const gate = chat.mock.holdTurns()
    act(() => first.chat().setDraft('/long 20'))
    act(() => void first.chat().submit())
    await gate.step(3)
    await waitFor(() => expect(second.chat().status).toBe('following'), until)
    const readsBefore = chat.mock.backend.inspect.countRequests({ route: 'messages' })
    const seen: string[] = []
    for (let i = 0; i < 5; i++) {
      await gate.step(1)
      await waitFor(() => expect(textOf(second.chat())).toBe(textOf(first.chat())), until)
      seen.push(textOf(second.chat()))
    }
    expect(new Set(seen).size).toBe(5) // five deltas, five different texts
    expect(chat.mock.backend.inspect.countRequests({ route: 'messages' })).toBe(readsBefore)
    gate.release()
    await waitFor(() => expect(second.chat().status).toBe('idle'), until)
    await waitFor(
      () =>
        expect(second.chat().messages).toEqual(
          chat.mock.backend.inspect.history(key.threadId)?.messages,
        ),
      until,
    )
  })

  it('without the relay, the second tab still converges through reads [R-TABS-NO-RELAY]', async () => {
    const key = thread()
    const first = openTab(key, false)
    const second = openTab(key, false)
    await waitFor(() => expect(second.chat().status).toBe('idle'), until)
    act(() => first.chat().setDraft('hello'))
    act(() => void first.chat().submit())
    await waitFor(() => expect(chat.mock.backend.inspect.running()).toEqual([]), until)
    await waitFor(
      () =>
        expect(second.chat().messages).toEqual(
          chat.mock.backend.inspect.history(key.threadId)?.messages,
        ),
      until,
    )
  })
})
