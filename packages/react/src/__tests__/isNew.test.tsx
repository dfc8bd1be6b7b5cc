/**
 * `isNew` is a first-mount hint: the app that keeps it on (`?new=1` left in the URL) and mounts
 * the thread again after its first answer (a reload, a route change) reads the thread, instead of
 * showing it empty for good.
 */
import { act, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { mountChat, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })
const until = { timeout: 10_000 }
const reads = () => chat.mock.backend.inspect.countRequests({ route: 'messages', method: 'GET' })

describe('isNew', () => {
  it('skips the first read of a minted id, and not a later mount once the thread has shown a message', async () => {
    const key = { ...thread(), isNew: true }
    const first = mountChat(key)
    expect(first.chat().status).toBe('idle')
    await act(() => first.chat().submit('Hello there'))
    await waitFor(() => expect(first.chat().messages).toHaveLength(2), until)
    await waitFor(() => expect(first.chat().isRunning).toBe(false), until)
    first.view.unmount()
    await act(() => new Promise((resolve) => setTimeout(resolve, 60))) // past the linger

    // The next page (a new client, as after a reload), with `isNew` still on.
    const before = reads()
    const again = mountChat(key, tabClient())
    await waitFor(() => expect(again.chat().messages).toHaveLength(2), until)
    expect(reads()).toBeGreaterThan(before)
  })

  it('a minted id never shown with a message stays new: no read', async () => {
    const key = { ...thread(), isNew: true }
    const before = reads()
    const view = mountChat(key)
    await act(() => new Promise((resolve) => setTimeout(resolve, 60)))
    expect(view.chat()).toMatchObject({ status: 'idle', loaded: true, messages: [] })
    expect(reads()).toBe(before)
  })

  it('a render thrown away before its commit does not use the hint up: the retry still skips the read', async () => {
    // Hydration that suspends, or a transition React retries, makes the client and the session
    // again: the first attempt's were asked for during render and never followed.
    const key = { ...thread(), isNew: true }
    const before = reads()
    const discarded = tabClient()
    discarded.session(key)
    const view = mountChat(key, tabClient())
    await act(() => new Promise((resolve) => setTimeout(resolve, 60)))
    expect(view.chat()).toMatchObject({
      status: 'idle',
      loaded: true,
      notFound: false,
      messages: [],
    })
    expect(reads()).toBe(before)
    discarded.dispose()

    // Followed once, the id is known: a later mount with the hint still on reads.
    view.view.unmount()
    await act(() => new Promise((resolve) => setTimeout(resolve, 60)))
    const later = mountChat(key, tabClient())
    await waitFor(() => expect(reads()).toBeGreaterThan(before), until)
    await waitFor(() => expect(later.chat().notFound).toBe(true), until)
  })
})
