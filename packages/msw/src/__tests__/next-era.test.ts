import './websocket-placeholder'
import {
  capabilitiesHeader,
  parseMessageQueue,
  queueEventFrom,
  turnEventFrom,
} from '@preview-chat/core/contract'
import { createPreviewChatClient } from '@preview-chat/core'
import { queue } from '@preview-chat/core/queue'
import { describe, expect, it } from 'vitest'
import { memoryQueueStore, readQueue } from '../index'
import { setupPreviewChatServer } from '../vitest'
import { follow, newThread, textOf } from './harness'

const chat = setupPreviewChatServer({
  flavor: 'next-era',
  deltaMs: 0,
  snapshotMs: 5,
  user: 'alice',
})

const chatUrl = 'http://localhost/rest/projects/p1/agents/v2/a1/chat'

/** The `type` of each event of an SSE body, read by core's turn and queue parsers. */
function typesOf(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => {
      const raw: unknown = JSON.parse(line.slice(6))
      const queued = queueEventFrom(raw)
      if (queued.kind === 'event') return queued.event.type
      const turn = turnEventFrom(raw)
      return turn.kind === 'event' ? turn.event.type : `unparsed ${turn.kind}`
    })
}

describe('the next-era flavor, mounted in MSW [R-QUEUE-MSW]', () => {
  it('queues and takes up a message, serves the queue routes, and dedupes its messageId', async () => {
    expect(chat.mock.backend.flavor).toBe('next-era')
    const body = {
      message: 'Hello',
      sessionId: crypto.randomUUID(),
      newSession: true,
      messageId: crypto.randomUUID(),
    }
    const post = () =>
      fetch(chatUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const answer = await post()
    expect(answer.headers.get(capabilitiesHeader)).toBe('message-dedupe, message-queue')
    const types = typesOf(await answer.text())
    expect(types.slice(0, 2)).toEqual(['message-queued', 'execution-started'])
    expect(types.at(-1)).toBe('done')
    const queue = await fetch(`${chatUrl}/${body.sessionId}/queue`)
    expect(parseMessageQueue(await queue.json())).toEqual({
      success: true,
      value: { steerableExecutionId: null, items: [] },
    })
    expect(typesOf(await (await post()).text())).toEqual(['done'])
  })
})

describe('a core client with queue() against the next-era flavor [R-QUEUE-MSW]', () => {
  it("posts a queued message only when the thread is free (whenStopped: 'pause'): the server's queue is read, never handed a message", async () => {
    const warnings: string[] = []
    const store = memoryQueueStore()
    const client = createPreviewChatClient({
      baseUrl: 'http://localhost/rest',
      relay: false,
      storage: null,
      lingerMs: 0,
      onWarning: (message) => warnings.push(message),
      queue: queue({ store }),
    })
    const turn = chat.mock.holdTurns()
    const key = newThread()
    const session = client.session({ ...key, isNew: true })
    const t = follow(session)
    await t.until((s) => s.status === 'idle', 'idle', 10_000)
    expect(await session.submit('/long 2')).toMatchObject({ outcome: 'accepted' })
    await t.until((s) => s.status === 'streaming', 'streaming', 10_000)
    expect(await session.submit('second')).toMatchObject({ outcome: 'queued' })
    turn.release()
    const done = await t.until(
      (s) =>
        s.status === 'idle' &&
        s.queue?.length === 0 &&
        s.messages.filter((m) => m.role === 'user').length === 2,
      'both turns',
      10_000,
    )
    expect(done.messages.filter((m) => m.role === 'user').map(textOf)).toEqual([
      '/long 2',
      'second',
    ])
    const count = (route: 'chat' | 'queue' | 'queueItem') =>
      chat.mock.backend.inspect.countRequests({ route })
    // Two POSTs, each when the thread was free; the server's queue read (to show it), not changed.
    expect(count('chat')).toBe(2)
    expect(count('queue')).toBeGreaterThan(0)
    expect(count('queueItem')).toBe(0)
    // Dedupe and the server's queue are learnt from the capabilities header; `message-queued` is
    // each message's acceptance, nothing to warn about.
    expect(await readQueue({ ...key, store })).toMatchObject({ dedupes: true, serverQueue: true })
    expect(warnings).toEqual([])
    t.unsubscribe()
    client.dispose()
  })
})
