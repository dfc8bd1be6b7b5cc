import { describe, expect, it } from 'vitest'
import { setupPreviewChatServer } from '../vitest'
import { createClient, follow, textOf } from './harness'

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0))

describe('failNextReads [R-MSW-READS R-READ-KEEPS]', () => {
  it('fails the next N reads with a status without reaching the backend; the transcript stays and readError is set', async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    // No push channel: its (re)connection would read too, and take one of the failures.
    const session = createClient('alice', false).session(key)
    const t = follow(session)
    const loaded = await t.until((s) => s.status === 'idle', 'the first read')
    expect(textOf(loaded.messages[0])).toBe('Hello')
    const readsBefore = chat.mock.backend.inspect.countRequests({ route: 'messages' })

    chat.mock.failNextReads(2, { status: 503 })
    await session.refresh()
    const failed = session.getState()
    expect(failed.readError?.code).toBe('server_error')
    expect(failed.readError?.status).toBe(503)
    expect(failed.messages).toBe(loaded.messages)
    await session.refresh()
    expect(session.getState().readError?.code).toBe('server_error')
    expect(chat.mock.backend.inspect.countRequests({ route: 'messages' })).toBe(readsBefore)

    // The third read is not failed: it reaches the backend and clears the error.
    await session.refresh()
    expect(session.getState().readError).toBeNull()
    expect(chat.mock.backend.inspect.countRequests({ route: 'messages' })).toBe(readsBefore + 1)
    expect(t.states.every((s) => s.messages.length === 0 || s.messages.length === 2)).toBe(true)
    t.unsubscribe()
  })

  it("fails reads with a network error ('network-error')", async () => {
    const { key } = await chat.mock.seed.thread()
    chat.mock.failNextReads(1, 'network-error')
    const session = createClient().session(key)
    const t = follow(session)
    // The first read fails; the session retries on its own (the thread's state is unknown).
    const errored = await t.until((s) => s.readError !== null, 'the failed read')
    expect(errored.readError?.code).toBe('network_error')
    expect(errored.status).toBe('recovering')
    const loaded = await t.until((s) => s.status === 'idle', 'the retried read')
    expect(loaded.readError).toBeNull()
    expect(loaded.messages).toHaveLength(2)
    t.unsubscribe()
  })
})

describe('failNextReads(Infinity) [R-MSW-READS]', () => {
  it('is a counter: every read fails at once, until reset(); calls add up in order', async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    const started = Date.now()
    chat.mock.failNextReads(Infinity, { status: 503 }) // one array entry per failure froze here
    expect(Date.now() - started).toBeLessThan(50)
    chat.mock.failNextReads(1, 'network-error') // after the endless run: never reached
    const session = createClient('alice', false).session(key)
    const t = follow(session)
    await t.until((s) => s.readError !== null, 'the failed read')
    for (let index = 0; index < 3; index++) {
      await session.refresh()
      expect(session.getState().readError?.status).toBe(503)
    }
    expect(chat.mock.backend.inspect.countRequests({ route: 'messages' })).toBe(0)

    chat.mock.reset()
    chat.mock.failNextReads(1, { status: 500 })
    chat.mock.failNextReads(0) // nothing
    await session.refresh()
    expect(session.getState().readError?.status).toBe(500)
    await session.refresh()
    expect(session.getState().readError).toBeNull()
    expect(chat.mock.backend.inspect.countRequests({ route: 'messages' })).toBe(1)
    t.unsubscribe()
  })
})

describe('delayReads [R-MSW-READS]', () => {
  it('holds each read back before it reaches the backend', async () => {
    const { key } = await chat.mock.seed.thread()
    chat.mock.delayReads(100)
    const session = createClient().session(key)
    const t = follow(session)
    for (let index = 0; index < 5; index++) await tick()
    expect(session.getState().status).toBe('recovering')
    expect(chat.mock.backend.inspect.countRequests({ route: 'messages' })).toBe(0)
    await t.until((s) => s.status === 'idle', 'the delayed read')
    expect(chat.mock.backend.inspect.countRequests({ route: 'messages' })).toBe(1)
    expect(t.statuses()).toEqual(['recovering', 'idle'])
    t.unsubscribe()
  })
})

describe('conditional reads through the mock [R-MSW-REAL-BACKEND R-READ-CONDITIONAL]', () => {
  it("answers a read that names the held ETag with 304, the backend's own answer; the session keeps its messages", async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    const session = createClient('alice', false).session(key)
    const t = follow(session)
    const loaded = await t.until((s) => s.status === 'idle', 'the first read')
    await session.refresh()
    const reads = chat.mock.backend.inspect.requests.filter((r) => r.route === 'messages')
    expect(reads.map((r) => r.status)).toEqual([200, 304])
    expect(session.getState().messages).toBe(loaded.messages)
    t.unsubscribe()
  })
})
