import { act, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { mountChat, Providers, setupChat, tabClient, thread } from './harness'

const chat = setupChat({ deltaMs: 2, snapshotMs: 10 })
const until = { timeout: 10_000 }
const posts = () => chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })
const reads = () => chat.mock.backend.inspect.countRequests({ route: 'messages', method: 'GET' })

/** Types and sends like a person: each step commits on its own, so every status is rendered. */
async function send(
  chatApi: () => { setDraft(text: string): void; submit(): Promise<unknown> },
  text: string,
) {
  act(() => chatApi().setDraft(text))
  let result: Promise<unknown> = Promise.resolve()
  act(() => {
    result = chatApi().submit()
  })
  return waitFor(() => result, until)
}

describe('usePreviewChat over the reference backend', () => {
  it('streams a turn live, then shows the record; one POST [R-LIVE-STREAM]', async () => {
    const key = thread()
    const { statuses, chat: api } = mountChat(key)
    await waitFor(() => expect(api().status).toBe('idle'), until)
    expect(await send(api, 'hello there')).toMatchObject({ outcome: 'accepted' })
    await waitFor(() => expect(api().status).toBe('idle'), until)
    const record = chat.mock.backend.inspect.history(key.threadId)
    await waitFor(() => expect(api().messages).toEqual(record?.messages), until)
    expect(statuses()).toEqual(['recovering', 'idle', 'submitting', 'streaming', 'idle'])
    expect(posts()).toBe(1)
  })

  it('recovers a cut stream from history without posting again [R-RECOVER-READ R-POST-ONCE]', async () => {
    const key = thread()
    const { statuses, chat: api } = mountChat(key)
    await waitFor(() => expect(api().status).toBe('idle'), until)
    void chat.mock.cutNextStream({ afterEvents: 3 })
    await send(api, '/long 30')
    await waitFor(() => expect(statuses()).toContain('recovering'), until)
    await waitFor(() => expect(chat.mock.backend.inspect.running()).toEqual([]), until)
    await waitFor(
      () =>
        expect(api().messages).toEqual(chat.mock.backend.inspect.history(key.threadId)?.messages),
      until,
    )
    expect(api().status).toBe('idle')
    expect(statuses().slice(0, 4)).toEqual(['recovering', 'idle', 'submitting', 'streaming'])
    expect(statuses().at(-1)).toBe('idle')
    expect(posts()).toBe(1)
  })

  it('keeps the transcript when reads fail, and says so [R-READ-KEEPS]', async () => {
    const seeded = await chat.mock.seed.thread({ messages: ['first'] })
    const { chat: api } = mountChat(seeded.key)
    await waitFor(() => expect(api().messages).toHaveLength(2), until)
    const known = api().messages
    // Every read fails from now: the retry that follows cannot clear the error before it is checked.
    chat.mock.failNextReads(Infinity, { status: 500 })
    await act(() => api().refresh())
    expect(api().readError).toMatchObject({ code: 'server_error' })
    expect(api().messages).toBe(known)
  })

  it('follows a turn it did not start, gated, with the draft editable; Stop ends it [R-TABS-FOLLOW R-TABS-STOP R-DRAFT-EDITABLE]', async () => {
    const seeded = await chat.mock.seed.runningTurn({ message: '/long 40' })
    const { statuses, chat: api } = mountChat(seeded.key)
    await waitFor(() => expect(api().status).toBe('following'), until)
    act(() => api().setDraft('typed while it runs'))
    expect(api()).toMatchObject({ canSubmit: false, draft: 'typed while it runs', isRunning: true })
    let submitted: unknown
    await act(async () => {
      submitted = await api().submit()
    })
    expect(submitted).toEqual({ outcome: 'busy' })
    let stopped: unknown
    await act(async () => {
      stopped = await api().stop()
    })
    expect(stopped).toEqual({ cancelRequested: true })
    seeded.turn.release()
    await waitFor(() => expect(api().status).toBe('idle'), until)
    expect(api().messages.at(-1)).toMatchObject({ executionStatus: 'cancelled' })
    expect(statuses()).toEqual(['recovering', 'following', 'stopping', 'idle'])
    expect(api().draft).toBe('typed while it runs')
    expect(posts()).toBe(1) // the seeding POST only
  })

  it('shows a truncated delegation the same live and recovered [R-DELEGATION-TRUNCATED]', async () => {
    const seeded = await chat.mock.seed.truncatedDelegation({ chars: 4_500 })
    const { chat: api } = mountChat(seeded.key)
    await waitFor(() => expect(api().messages).toHaveLength(2), until)
    const delegation = api().messages[1]?.content.find(
      (part) => part.type === 'tool-call' && part.childTrace,
    )
    expect(delegation).toMatchObject({ childTrace: { truncated: true } })
  })

  it('a thread that is not yours is not found, with no transcript [R-SERVER-PRIVATE]', async () => {
    const seeded = await chat.mock.seed.thread({ user: 'alice' })
    const { chat: api } = mountChat(seeded.key, tabClient('bob'))
    await waitFor(() => expect(api().notFound).toBe(true), until)
    expect(api().messages).toEqual([])
  })

  it('enabled: false sends nothing', async () => {
    const { chat: api } = mountChat({ ...thread(), enabled: false })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(reads()).toBe(0)
    expect(api().status).toBe('recovering')
  })

  it("enabled: false before the app has a thread id ('') renders, reads nothing, and sends nothing [R-HOOK-ENABLED]", async () => {
    const client = tabClient()
    const {
      chat: api,
      view,
      Probe,
    } = mountChat({ ...thread(), threadId: '', enabled: false }, client)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(api()).toMatchObject({ status: 'recovering', messages: [], canSend: false })
    expect(await api().submit('hello')).toMatchObject({
      outcome: 'failed',
      error: { code: 'invalid_request', message: expect.stringContaining('threadId') },
    })
    expect(await api().stop()).toEqual({ cancelRequested: false })
    expect(reads()).toBe(0)
    expect(posts()).toBe(0)
    // The app gets its id and enables the hook: the thread is followed as any other.
    const key = thread()
    view.rerender(
      <Providers client={client}>
        <Probe {...key} />
      </Providers>,
    )
    await waitFor(() => expect(api().status).toBe('idle'), until)
  })

  it('a new thread the app minted posts newSession without a first read [R-GATE-NEW-THREAD]', async () => {
    const key = thread()
    const { chat: api } = mountChat({ ...key, isNew: true })
    expect(api().canSubmit).toBe(false)
    expect(await send(api, 'first words')).toMatchObject({ outcome: 'accepted' })
    expect(chat.mock.backend.inspect.threads().map((t) => t.id)).toContain(key.threadId)
    await waitFor(() => expect(api().status).toBe('idle'), until)
  })
})
