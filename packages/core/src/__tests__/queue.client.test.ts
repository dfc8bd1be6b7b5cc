/**
 * The client's message queue (`queue()` of `@preview-chat/core/queue`, issue 29) against the
 * reference backend, in process: tabs are clients of one user sharing one storage and one set of
 * locks, as a browser's tabs share localStorage and Web Locks. The agent's every pause waits on a
 * gate the test opens, so a turn runs exactly as long as the test wants (no test here depends on
 * the machine's speed). Each scenario checks the queue's states in order, and the POSTs by
 * `messageId`: every queued message POSTed once, recorded once, in the order written.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { FlavorName } from '../../../server/src/flavor/types'
import { createPreviewChatClient } from '../index'
import {
  clients,
  closeWorlds,
  describeQueue,
  idleWith,
  postsById,
  until,
  userTexts,
  world,
} from './queueWorld'

afterEach(closeWorlds)

describe('the client queue', () => {
  it('a message sent while a turn runs waits in the queue, out of the transcript, then is sent once [R-QUEUE-CLIENT]', async () => {
    const w = world()
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    expect(await a.session.submit('/long 3')).toMatchObject({ outcome: 'accepted' })
    await until(() => a.state().status === 'streaming')

    // With a queue, Send stays open while the turn runs: the message will wait.
    expect(a.state()).toMatchObject({ canSend: true, canSubmit: false, isRunning: true })
    a.session.setDraft('second')
    expect(a.state().canSubmit).toBe(true)
    const queued = await a.session.submit()
    expect(queued).toEqual({ outcome: 'queued', id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    // Out of the transcript, out of the draft; kept in storage for the other tabs and a reload.
    expect(userTexts(a.state())).toEqual(['/long 3'])
    expect(a.state().draft).toBe('')
    expect(a.state().queue).toEqual([
      { id: queued.outcome === 'queued' ? queued.id : '', text: 'second', status: 'queued' },
    ])
    await until(() => w.stored(w.key())?.includes('second') === true)

    w.agent.open()
    await until(idleWith(a, 2))
    expect(userTexts(a.state())).toEqual(['/long 3', 'second'])
    expect(a.queues).toEqual(['[]', '[second:queued]', '[second:sending]', '[]'])
    expect(w.posts.map((p) => p.message)).toEqual(['/long 3', 'second'])
    expect(postsById(w.posts)).toEqual([1, 1])
    // The turn's recorded user message carries the queued message's id.
    const recordedIds = a
      .state()
      .messages.filter((m) => m.role === 'user')
      .map((m) => m.messageId)
    expect(recordedIds[1]).toBe(queued.outcome === 'queued' ? queued.id : '')
    // What storage keeps now: no message, and what the server was found to do.
    await until(() => !w.stored(w.key())?.includes('second'))
    expect(JSON.parse(w.stored(w.key()) ?? '{}')).toMatchObject({
      items: [],
      dedupes: true,
    })
  })

  it('two tabs write while a turn runs: one sender, every message once, in the order written [R-QUEUE-CLIENT-ONCE]', async () => {
    const w = world()
    const a = w.tab()
    const b = w.tab()
    await until(() => a.state().status === 'idle' && b.state().status === 'idle')
    await a.session.submit('/long 2')
    await until(() => b.state().isRunning && a.state().status === 'streaming')
    expect(await b.session.submit('from b 1')).toMatchObject({ outcome: 'queued' })
    expect(await a.session.submit('from a 2')).toMatchObject({ outcome: 'queued' })
    expect(await b.session.submit('from b 3')).toMatchObject({ outcome: 'queued' })
    // Both tabs show the one queue.
    await until(() => describeQueue(a.state()) === describeQueue(b.state()))
    expect(describeQueue(b.state())).toBe('[from b 1:queued,from a 2:queued,from b 3:queued]')

    w.agent.open()
    await until(idleWith(a, 4))
    await until(() => userTexts(b.state()).length === 4 && b.state().queue?.length === 0)
    expect(userTexts(a.state())).toEqual(['/long 2', 'from b 1', 'from a 2', 'from b 3'])
    expect(userTexts(b.state())).toEqual(userTexts(a.state()))
    expect(w.posts.map((p) => p.message)).toEqual(['/long 2', 'from b 1', 'from a 2', 'from b 3'])
    expect(postsById(w.posts)).toEqual([1, 1, 1, 1])
  })

  it('a reload keeps the queue: the next page sends what the last one queued [R-QUEUE-CLIENT-DURABLE]', async () => {
    const w = world()
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 2')
    await until(() => a.state().status === 'streaming')
    await a.session.submit('kept across the reload')
    await until(() => w.stored(w.key())?.includes('kept across') === true)
    a.client.dispose() // the page goes away

    const again = w.tab()
    // The new page shows the queue before the thread is free.
    await until(() => describeQueue(again.state()) === '[kept across the reload:queued]')
    w.agent.open()
    await until(idleWith(again, 2))
    expect(userTexts(again.state())).toEqual(['/long 2', 'kept across the reload'])
    expect(postsById(w.posts)).toEqual([1, 1])
  })

  it.each<[FlavorName, string]>([
    ['spec', 'sent again with the same id: recorded once'],
    ['n8n-2.41', 'never sent twice: undelivered, for the person to decide'],
  ])('a tab closed mid-send, on %s: %s [R-QUEUE-CLIENT-ORPHAN]', async (flavor) => {
    // The closed tab's POST holds B's gate until its hold expires (it never said it ended).
    const w = world({ flavor, submitTimeoutMs: 1_000 })
    const a = w.tab()
    const b = w.tab()
    await until(() => a.state().status === 'idle' && b.state().status === 'idle')
    await a.session.submit('/long 2')
    await until(() => a.state().status === 'streaming')
    // B hears of A's turn as the channel delivers it (a task later), then queues behind it.
    await until(() => b.state().status === 'following')
    await b.session.submit('queued by b')
    await until(() => describeQueue(a.state()) === '[queued by b:queued]')
    // A sends (it is the sender: it followed first); its POST is held and A closes meanwhile.
    let release: (() => void) | null = null
    w.holdNextPost((go) => (release = go))
    w.agent.open()
    await until(() => release !== null)
    expect(describeQueue(b.state())).toBe('[queued by b:sending]')
    a.client.dispose()
    // B is the sender now; it reads, and the record does not hold the message.
    if (flavor === 'spec') {
      // The spec server dedupes (learnt from the first turn): B sends it again, same id.
      await until(idleWith(b, 2))
      expect(userTexts(b.state())).toEqual(['/long 2', 'queued by b'])
    } else {
      await until(() => b.state().queue?.[0]?.status === 'undelivered')
      expect(b.state().queue?.[0]?.error?.message).toMatch(/may have been sent/)
      expect(userTexts(b.state())).toEqual(['/long 2'])
    }
    // The held POST goes on to a server that already closed its tab's side: its fate is the record's.
    ;(release as (() => void) | null)?.()
    const ids = w.posts.filter((p) => p.message === 'queued by b').map((p) => p.messageId)
    expect(new Set(ids).size).toBe(1)
    expect(ids.length).toBe(flavor === 'spec' ? 2 : 1)
  })

  it('Stop pauses the queue (whenStopped: pause): nothing is sent until resumeQueue() [R-QUEUE-CLIENT-STOPPED]', async () => {
    const w = world()
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 5')
    await until(() => a.state().status === 'streaming')
    await a.session.submit('after the stop')
    expect((await a.session.stop()).cancelRequested).toBe(true)
    await until(() => a.state().status === 'idle' && a.state().activeExecutionId === null)
    expect(describeQueue(a.state())).toBe('[after the stop:queued]|paused')
    expect(w.posts.map((p) => p.message)).toEqual(['/long 5'])

    w.agent.open()
    a.state().resumeQueue?.()
    await until(idleWith(a, 2))
    expect(a.queues).toEqual([
      '[]',
      '[after the stop:queued]',
      '[after the stop:queued]|paused',
      // Resumed, then marked `sending` under the write lock.
      '[after the stop:queued]',
      '[after the stop:sending]',
      '[]',
    ])
  })

  it('whenStopped: draft puts what was queued back in the draft [R-QUEUE-CLIENT-STOPPED]', async () => {
    const w = world({ whenStopped: 'draft' })
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 5')
    await until(() => a.state().status === 'streaming')
    await a.session.submit('one')
    await a.session.submit('two')
    await a.session.stop()
    expect(a.state().queue).toEqual([])
    expect(a.state().draft).toBe('one\n\ntwo')
    w.agent.open()
    await until(() => a.state().status === 'idle')
    expect(w.posts.map((p) => p.message)).toEqual(['/long 5'])
  })

  it('edit, remove, reorder and send now change what is sent, and in which order [R-QUEUE-CLIENT-EDIT]', async () => {
    const w = world()
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 2')
    await until(() => a.state().status === 'streaming')
    for (const text of ['one', 'two', 'three', 'four']) await a.session.submit(text)
    const id = (text: string) => a.state().queue?.find((item) => item.text === text)?.id ?? ''
    a.state().editQueued?.(id('one'), 'one, edited')
    a.state().removeQueued?.(id('two'))
    a.state().reorderQueued?.(id('three'), 0)
    a.state().sendQueuedNow?.(id('four'))
    expect(describeQueue(a.state())).toBe('[four:queued,three:queued,one, edited:queued]')
    w.agent.open()
    await until(idleWith(a, 4))
    expect(userTexts(a.state())).toEqual(['/long 2', 'four', 'three', 'one, edited'])
    expect(w.posts.map((p) => p.message)).toEqual(['/long 2', 'four', 'three', 'one, edited'])
  })

  it('a store that refuses a write loses nothing: the message is kept and sent once, and it says so [R-QUEUE-CLIENT-DURABLE]', async () => {
    const w = world()
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 2')
    await until(() => a.state().status === 'streaming')
    w.failWrites(1)
    await a.session.submit('kept through a refused write')
    await until(() =>
      w.warnings.some((m) => /could not be written .*quota has been exceeded/.test(m)),
    )
    expect(describeQueue(a.state())).toBe('[kept through a refused write:queued]')
    w.agent.open()
    await until(idleWith(a, 2))
    expect(userTexts(a.state())).toEqual(['/long 2', 'kept through a refused write'])
    expect(postsById(w.posts)).toEqual([1, 1])
  })

  it('what storage holds is parsed: junk is reported and read as an empty queue, losing nothing typed [R-QUEUE-CLIENT-PARSED]', async () => {
    const w = world()
    await w.seed(w.key(), '{"v":"1","items":[{"id":1}]')
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    expect(a.state().queue).toEqual([])
    expect(w.warnings.some((m) => /stored message queue is not a queue/.test(m))).toBe(true)
    a.session.setDraft('still here')
    expect(a.state().draft).toBe('still here')
  })

  it("one user's queue never reaches another's tab [R-QUEUE-CLIENT-PARSED]", async () => {
    const w = world()
    const alice = w.tab('alice')
    const bob = w.tab('bob')
    await until(() => alice.state().status === 'idle' && bob.state().status === 'idle')
    await alice.session.submit('/long 2')
    await until(() => alice.state().status === 'streaming')
    await alice.session.submit("alice's")
    await until(() => w.stored(w.key('alice')) !== null)
    expect(bob.state().queue).toEqual([])
    expect(w.stored(w.key('bob'))).toBeNull()
    w.agent.open()
    await until(idleWith(alice, 2))
  })

  it('without queue() there is no queue in the state [R-QUEUE-CLIENT]', () => {
    const client = createPreviewChatClient({ storage: null, push: false, relay: false })
    clients.push(client)
    const session = client.session({ projectId: 'p', agentId: 'a', threadId: 't', isNew: true })
    expect(session.getState().queue).toBeUndefined()
  })
})
