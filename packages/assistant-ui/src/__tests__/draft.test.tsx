// The per-thread draft lives in assistant-ui's composer and survives what the session's draft
// survives: a reload (a remount with a fresh client over the same sessionStorage), a refused send,
// a thread switch. Nothing writes the composer's empty starting text over a stored draft.
import { act, fireEvent, screen, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { input, lastAnswer, mountChat, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })
const posts = () => chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })
const type = (text: string) => fireEvent.change(input(), { target: { value: text } })
const pause = (ms: number) => act(() => new Promise((resolve) => setTimeout(resolve, ms)))

describe('the draft', () => {
  it('is restored into the composer after a reload, and stays after the thread loads', async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    const first = mountChat(key)
    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    type('keep me')
    expect(first.session(key).getState().draft).toBe('keep me')
    first.view.unmount()
    await pause(40) // past the session's linger: the next client starts afresh

    // A new page: a new client, the same sessionStorage.
    const reloaded = mountChat(key, tabClient())
    await waitFor(() => expect(input().value).toBe('keep me'))
    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    await pause(50)
    expect(input().value).toBe('keep me')
    expect(reloaded.session(key).getState().draft).toBe('keep me')
  })

  it('an empty composer at mount does not wipe the stored draft', async () => {
    const key = thread()
    tabClient().session(key).setDraft('stored before the page')
    const { session } = mountChat({ ...key, isNew: true })
    await waitFor(() => expect(input().value).toBe('stored before the page'))
    expect(session(key).getState().draft).toBe('stored before the page')
  })

  it('a draft that arrives after mount (hydration) fills the empty composer once', async () => {
    const key = thread()
    const { session } = mountChat({ ...key, isNew: true })
    expect(input().value).toBe('')
    act(() => session(key).setDraft('arrived late'))
    await waitFor(() => expect(input().value).toBe('arrived late'))
    type('') // the person empties it: nothing puts the old text back
    await pause(30)
    expect(input().value).toBe('')
    expect(session(key).getState().draft).toBe('')
  })

  it('is cleared once the message is accepted', async () => {
    const key = thread()
    const { session } = mountChat({ ...key, isNew: true })
    type('Hello there')
    fireEvent.click(screen.getByText('Send'))
    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    expect(input().value).toBe('')
    expect(session(key).getState().draft).toBe('')
  })

  it('is kept, in the composer and stored, when the send fails', async () => {
    // carol may read but not post: the server answers 403 `forbidden`.
    const key = thread()
    const { session } = mountChat({ ...key, isNew: true }, tabClient('carol'))
    type('Let me in')
    fireEvent.click(screen.getByText('Send'))
    await waitFor(() => expect(session(key).getState().error?.code).toBe('forbidden'))
    await waitFor(() => expect(input().value).toBe('Let me in'))
    expect(session(key).getState().draft).toBe('Let me in')
  })

  it('is kept when the session answers busy (a second send before the gate shut here)', async () => {
    const turn = chat.mock.holdTurns()
    const key = thread()
    const { runtime, session } = mountChat({ ...key, isNew: true })
    const composer = runtime().thread.composer
    // Two sends in one task, before React renders the gate shut: the second reaches onNew.
    act(() => {
      composer.setText('/long 3')
      composer.send()
      composer.setText('Second')
      composer.send()
    })
    await waitFor(() => expect(input().value).toBe('Second'))
    expect(session(key).getState().draft).toBe('Second')
    turn.release()
    await waitFor(() => expect(lastAnswer().getAttribute('data-status')).toBe('complete'))
    expect(posts()).toBe(1)
    expect(input().value).toBe('Second')
  })

  it('follows a thread switch: each thread shows its own draft', async () => {
    const a = thread()
    const b = thread()
    const { rerender, session } = mountChat({ ...a, isNew: true })
    type('for A')
    rerender({ ...b, isNew: true })
    await waitFor(() => expect(input().value).toBe(''))
    type('for B')
    rerender({ ...a, isNew: true })
    await waitFor(() => expect(input().value).toBe('for A'))
    expect(session(a).getState().draft).toBe('for A')
    expect(session(b).getState().draft).toBe('for B')
  })
})
