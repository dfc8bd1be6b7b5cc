// seedQueue / readQueue against a real core client with `queue()`, and what that client does
// against the next-era flavor (the platform's own queue).
import { createPreviewChatClient, type PreviewChatClient } from '@preview-chat/core'
import { queue, type QueueStorage } from '@preview-chat/core/queue'
import { afterEach, describe, expect, it } from 'vitest'
import { memoryStorage, readQueue, seedQueue } from '../index'
import { setupPreviewChatServer } from '../vitest'
import { follow, textOf } from './harness'

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })
const clients: PreviewChatClient[] = []
afterEach(() => {
  for (const client of clients.splice(0)) client.dispose()
})

/** Alice's tab, with a queue kept in `storage`. */
function tab(storage: QueueStorage, warnings: string[] = []) {
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
    queue: queue({ storage }),
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
    const storage = memoryStorage()
    const seeded = seedQueue({
      scope: 'alice',
      ...key,
      storage,
      messages: ['first', { text: 'second', status: 'queued' }],
    })
    expect(seeded.messages.map((m) => m.text)).toEqual(['first', 'second'])
    expect(seeded.key).toBe(`preview-chat:queue:alice:${JSON.stringify(Object.values(key))}`)

    const session = tab(storage).session(key)
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
    expect(readQueue({ scope: 'alice', ...key, storage })).toMatchObject({
      messages: [],
      paused: false,
      dedupes: true,
    })
    t.unsubscribe()
  })

  it('readQueue reads what the client wrote; a paused seed sends nothing', async () => {
    const { key, turn } = await chat.mock.seed.runningTurn()
    const storage = memoryStorage()
    const session = tab(storage).session(key)
    const t = follow(session)
    await t.until((s) => s.status === 'following', 'following', until)
    const queued = await session.submit('written by the client')
    expect(queued).toMatchObject({ outcome: 'queued' })
    await t.until(() => storage.map.size > 0, 'the write', until)
    expect(readQueue({ scope: 'alice', ...key, storage }).messages).toEqual([
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
    seedQueue({ scope: 'alice', ...other.key, storage, messages: ['waits'], paused: true })
    const before = posts()
    const pausedSession = tab(storage).session(other.key)
    const paused = follow(pausedSession)
    await paused.until((s) => s.status === 'idle', 'idle', until)
    await pausedSession.refresh() // a read's round trip more, for a POST that should not come
    const state = pausedSession.getState()
    expect(state.queuePaused).toBe(true)
    expect(state.queue?.map((m) => m.text)).toEqual(['waits'])
    expect(posts()).toBe(before)
    paused.unsubscribe()
  })

  it('an undelivered message keeps its error; what core would not read is refused', () => {
    const storage = memoryStorage()
    const seeded = seedQueue({
      threadId: 't1',
      storage,
      messages: [
        {
          text: 'lost',
          status: 'undelivered',
          error: { code: 'network_error', message: 'may have been sent' },
        },
      ],
    })
    expect(seeded.key).toBe('preview-chat:queue::["demo-project","demo-agent","t1"]')
    expect(readQueue({ threadId: 't1', storage }).messages[0]).toMatchObject({
      status: 'undelivered',
      error: { code: 'network_error', message: 'may have been sent' },
    })
    storage.setItem(seeded.key, '{"v":"0"}')
    expect(() => readQueue({ threadId: 't1', storage })).toThrow(/is not a queue/)
    expect(readQueue({ threadId: 'nothing stored', storage }).messages).toEqual([])
    expect(() => readQueue({ threadId: 't1' })).toThrow(/pass the `storage`/)
  })
})
