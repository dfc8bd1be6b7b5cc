import { act, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { mountChat, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 2, snapshotMs: 10 })
const until = { timeout: 10_000 }

describe('the draft survives a reload (no peer does this) [R-DRAFT-RELOAD]', () => {
  it('is saved per thread, restored on mount, and cleared when its turn is accepted', async () => {
    const key = thread()
    const before = mountChat(key)
    await waitFor(() => expect(before.chat().status).toBe('idle'), until)
    act(() => before.chat().setDraft('typed before the reload'))
    before.view.unmount()

    // A reload: a new client, the same sessionStorage.
    const after = mountChat(key)
    expect(after.chat().draft).toBe('typed before the reload')
    const other = mountChat(thread())
    expect(other.chat().draft).toBe('') // per thread
    await waitFor(() => expect(after.chat().status).toBe('idle'), until)
    act(() => void after.chat().submit())
    await waitFor(() => expect(after.chat().status).not.toBe('submitting'), until)
    expect(after.chat().draft).toBe('')
    expect(Object.keys(sessionStorage)).toEqual([])
  })

  it('is kept when the submission is busy [R-DRAFT-KEPT]', async () => {
    const seeded = await chat.mock.seed.runningTurn()
    const tab = mountChat(seeded.key)
    await waitFor(() => expect(tab.chat().status).toBe('following'), until)
    act(() => tab.chat().setDraft('wait for it'))
    let result: unknown
    await act(async () => {
      result = await tab.chat().submit()
    })
    expect(result).toEqual({ outcome: 'busy' })
    expect(tab.chat().draft).toBe('wait for it')
    seeded.turn.release()
  })

  it('is kept on turn_already_running, and the tab then follows the running turn [R-DRAFT-KEPT R-GATE-CONFLICT]', async () => {
    const seeded = await chat.mock.seed.thread({ messages: ['earlier'] })
    // This tab hears nothing (no push, slow polling), so it does not know a turn started.
    const tab = mountChat(
      seeded.key,
      tabClient('alice', { push: false, poll: { baseMs: 60_000, maxMs: 60_000 } }),
    )
    await waitFor(() => expect(tab.chat().status).toBe('idle'), until)
    const running = await chat.mock.seed.runningTurn({ threadId: seeded.key.threadId })
    act(() => tab.chat().setDraft('mine'))
    let result: unknown
    await act(async () => {
      result = await tab.chat().submit()
    })
    expect(result).toMatchObject({ outcome: 'failed', error: { code: 'turn_already_running' } })
    expect(tab.chat()).toMatchObject({ draft: 'mine', error: { code: 'turn_already_running' } })
    await waitFor(() => expect(tab.chat().status).toBe('following'), until)
    expect(sessionStorage.length).toBe(1)
    running.turn.release()
  })

  it('is kept when the submission fails [R-DRAFT-KEPT R-GATE-REFUSED]', async () => {
    const key = thread()
    const tab = mountChat(key, tabClient('carol')) // read-only user: POST answers 403
    await waitFor(() => expect(tab.chat().status).toBe('idle'), until)
    act(() => tab.chat().setDraft('not allowed'))
    let result: unknown
    await act(async () => {
      result = await tab.chat().submit()
    })
    expect(result).toMatchObject({ outcome: 'failed', error: { code: 'forbidden' } })
    expect(tab.chat()).toMatchObject({ draft: 'not allowed', error: { code: 'forbidden' } })
  })
})
