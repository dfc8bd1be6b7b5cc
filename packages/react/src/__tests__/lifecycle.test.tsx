import { act, render, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { Providers, createProbe, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 2, snapshotMs: 10 })
const until = { timeout: 10_000 }
const inspect = () => chat.mock.backend.inspect

describe('StrictMode (the peers’ double resume, vitest/ai #13863) [R-LIFECYCLE-STRICT]', () => {
  it('posts once, opens one push subscription and reads once per trigger', async () => {
    const client = tabClient('alice', { lingerMs: 50 })
    const { Probe, chat: api } = createProbe()
    // A thread that exists: one found missing is read once, the channel's opening no trigger
    // (R-READ-404-ONCE, core/session.newThread.test.ts).
    const { key } = await chat.mock.seed.thread({ user: 'alice', messages: ['Hello'] })
    // What seeding it asked of the server, not counted below.
    const posted = inspect().countRequests({ route: 'chat', method: 'POST' })
    const read = inspect().countRequests({ route: 'messages', method: 'GET' })
    render(
      <Providers client={client} strict>
        <Probe {...key} />
      </Providers>,
    )
    await waitFor(() => expect(api().status).toBe('idle'), until)
    // Two triggers, one read each: the mount, and the push channel opening after that read
    // began (what was recorded in between was announced to nobody).
    await waitFor(
      () => expect(inspect().countRequests({ route: 'messages', method: 'GET' }) - read).toBe(2),
      until,
    )
    expect(inspect().countRequests({ route: 'push', method: 'GET' })).toBe(1)
    act(() => api().setDraft('once'))
    let result: Promise<unknown> = Promise.resolve()
    act(() => {
      result = api().submit()
    })
    await act(() => result)
    await waitFor(() => expect(api().status).toBe('idle'), until)
    expect(inspect().countRequests({ route: 'chat', method: 'POST' }) - posted).toBe(1)
    expect(inspect().countRequests({ route: 'push', method: 'GET' })).toBe(1)
  })
})

describe('unmounting', () => {
  it('stops reading mid-stream without cancelling; remounting recovers the finished turn [R-TURN-SURVIVES R-LIFECYCLE-QUIET]', async () => {
    const client = tabClient()
    const key = thread()
    const first = createProbe()
    const view = render(
      <Providers client={client}>
        <first.Probe {...key} />
      </Providers>,
    )
    await waitFor(() => expect(first.chat().status).toBe('idle'), until)
    const gate = chat.mock.holdTurns()
    act(() => first.chat().setDraft('/long 5'))
    act(() => void first.chat().submit())
    await gate.step(2)
    await waitFor(() => expect(first.chat().status).toBe('streaming'), until)
    view.unmount()
    expect(inspect().running()).toHaveLength(1)
    const [executionId] = inspect().running()
    await new Promise((resolve) => setTimeout(resolve, 50)) // past the session's linger
    const readsWhileAway = inspect().countRequests({ route: 'messages' })
    await gate.step(2)
    gate.release()
    await waitFor(() => expect(inspect().running()).toEqual([]), until)
    expect(
      inspect()
        .executions()
        .find((e) => e.id === executionId)?.status,
    ).toBe('success')
    expect(inspect().countRequests({ route: 'stop' })).toBe(0)
    expect(inspect().countRequests({ route: 'messages' })).toBe(readsWhileAway)

    const second = createProbe()
    render(
      <Providers client={client}>
        <second.Probe {...key} />
      </Providers>,
    )
    await waitFor(
      () => expect(second.chat().messages).toEqual(inspect().history(key.threadId)?.messages),
      until,
    )
    expect(second.statuses()).toEqual(['recovering', 'idle'])
  })
})

describe('thread switch [R-LIFECYCLE-THREAD-SWITCH]', () => {
  it('shows nothing of the old thread, and a late answer for it never lands in the new one', async () => {
    const old = await chat.mock.seed.thread({ messages: ['old thread'] })
    const fresh = await chat.mock.seed.thread({ messages: ['new thread'] })
    const client = tabClient()
    const { Probe, probe, chat: api } = createProbe()
    chat.mock.delayReads(30)
    const view = render(
      <Providers client={client}>
        <Probe {...old.key} />
      </Providers>,
    )
    // Switch before the old thread's read answers.
    view.rerender(
      <Providers client={client}>
        <Probe {...fresh.key} />
      </Providers>,
    )
    await waitFor(() => expect(api().messages).toHaveLength(2), until)
    await new Promise((resolve) => setTimeout(resolve, 80))
    const texts = probe.log.flatMap((state) =>
      state.messages.map((m) => (m.content[0]?.type === 'text' ? m.content[0].text : '')),
    )
    expect(texts).not.toContain('old thread')
    expect(api().messages[0]?.content).toEqual([{ type: 'text', text: 'new thread' }])
  })
})
