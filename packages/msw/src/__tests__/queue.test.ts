// seedQueue / readQueue against a real core client with `queue()`, and what that client does
// against the next-era flavor (the platform's own queue).
import { createPreviewChatClient, type PreviewChatClient } from '@preview-chat/core'
import { queue, type QueueStore } from '@preview-chat/core/queue'
import { afterEach, describe, expect, it } from 'vitest'
import { memoryQueueStore, readQueue, seedQueue } from '../index'
import { setupPreviewChatServer } from '../vitest'
import { follow, textOf } from './harness'

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })
const clients: PreviewChatClient[] = []
afterEach(() => {
  for (const client of clients.splice(0)) client.dispose()
})

/** Alice's tab, with a queue kept in `store`. */
function tab(store: QueueStore, warnings: string[] = []) {
  const client = createPreviewChatClient({
    baseUrl: 'http://localhost/rest',
    headers: { authorization: 'Bearer alice' },
    scope: 'alice',
    storage: null,
    relay: false,
    lingerMs: 0,
    retry: { baseMs: 5, maxMs: 20 },
    poll: { baseMs: 5, maxMs: 20 },
    onWarning: (message) => warnings.push(message),
    queue: queue({ store }),
  })
  clients.push(client)
  return client
}

const users = (state: { messages: { role: string; content: { type: string }[] }[] }) =>
  state.messages.filter((m) => m.role === 'user').map((m) => textOf(m))
const posts = () => chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })
const until = 10_000

describe('seedQueue and readQueue [R-QUEUE-CLIENT-MSW]', () => {
  it('a seeded queue is what the next page shows and sends, in order, once each', async () => {
    const { key, turn } = await chat.mock.seed.runningTurn({ message: '/long 2' })
    const store = memoryQueueStore()
    const seeded = await seedQueue({
      scope: 'alice',
      ...key,
      store,
      messages: ['first', { text: 'second', status: 'queued' }],
    })
    expect(seeded.messages.map((m) => m.text)).toEqual(['first', 'second'])
    expect(seeded.key).toBe(`preview-chat:queue:alice:${JSON.stringify(Object.values(key))}`)

    const session = tab(store).session(key)
    const t = follow(session)
    const shown = await t.until((s) => s.queue?.length === 2, 'the seeded queue', until)
    expect(shown.queue).toEqual(seeded.messages)
    expect(users(shown)).not.toContain('first')
    turn.release()
    const done = await t.until(
      (s) => s.status === 'idle' && users(s).length === 3 && s.queue?.length === 0,
      'both sent',
      until,
    )
    expect(users(done)).toEqual(['/long 2', 'first', 'second'])
    expect(posts()).toBe(3)
    // What the client keeps now: nothing waits, and the server was found to dedupe.
    expect(await readQueue({ scope: 'alice', ...key, store })).toMatchObject({
      messages: [],
      paused: false,
      dedupes: true,
    })
    t.unsubscribe()
  })

  it('readQueue reads what the client wrote; a paused seed sends nothing', async () => {
    const { key, turn } = await chat.mock.seed.runningTurn()
    const store = memoryQueueStore()
    const session = tab(store).session(key)
    const t = follow(session)
    await t.until((s) => s.status === 'following', 'following', until)
    const queued = await session.submit('written by the client')
    expect(queued).toMatchObject({ outcome: 'queued' })
    await expect
      .poll(async () => (await readQueue({ scope: 'alice', ...key, store })).messages.length)
      .toBe(1)
    expect((await readQueue({ scope: 'alice', ...key, store })).messages).toEqual([
      {
        id: queued.outcome === 'queued' ? queued.id : '',
        text: 'written by the client',
        status: 'queued',
      },
    ])
    session.getState().removeQueued?.(queued.outcome === 'queued' ? queued.id : '')
    turn.release()
    await t.until((s) => s.status === 'idle' && s.queue?.length === 0, 'idle', until)
    t.unsubscribe()

    // Another thread, seeded paused: the client shows it paused and posts nothing.
    const other = await chat.mock.seed.thread()
    await seedQueue({ scope: 'alice', ...other.key, store, messages: ['waits'], paused: true })
    const before = posts()
    const pausedSession = tab(store).session(other.key)
    const paused = follow(pausedSession)
    await paused.until((s) => s.status === 'idle', 'idle', until)
    await pausedSession.refresh() // a read's round trip more, for a POST that should not come
    const state = pausedSession.getState()
    expect(state.queuePaused).toBe(true)
    expect(state.queue?.map((m) => m.text)).toEqual(['waits'])
    expect(posts()).toBe(before)
    paused.unsubscribe()
  })

  it('an undelivered message keeps its error; what core would not read is refused', async () => {
    const store = memoryQueueStore()
    const seeded = await seedQueue({
      threadId: 't1',
      store,
      messages: [
        {
          text: 'lost',
          status: 'undelivered',
          error: { code: 'network_error', message: 'may have been sent' },
        },
      ],
    })
    expect(seeded.key).toBe('preview-chat:queue::["demo-project","demo-agent","t1"]')
    expect((await readQueue({ threadId: 't1', store })).messages[0]).toMatchObject({
      status: 'undelivered',
      error: { code: 'network_error', message: 'may have been sent' },
    })
    await store.update(seeded.key, () => '{"v":"0"}')
    await expect(readQueue({ threadId: 't1', store })).rejects.toThrow(/is not a queue/)
    expect((await readQueue({ threadId: 'nothing stored', store })).messages).toEqual([])
  })
})
