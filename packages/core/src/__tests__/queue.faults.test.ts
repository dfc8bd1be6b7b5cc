/**
 * The queue where the browser is unkind (issue 35, rows a, b, c, h), against the reference backend
 * in process, with each device's localStorage on (drafts kept across a reload) and the queue's
 * store shared by the device's tabs. Each scenario checks the sequence of states a person sees.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { indexedDbQueueStore, queue } from '../queue'
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

afterEach(() => {
  closeWorlds()
  vi.unstubAllGlobals()
})

/** A tab of `w` closed, as a reload closes it (its client disposed). */
const close = (tab: { client: { dispose(): void } }) => tab.client.dispose()

describe('after a reload the composer never holds a queued message [R-QUEUE-DRAFT-STORED]', () => {
  it('a message queued from the draft is out of the composer after a reload, and sent once', async () => {
    const w = world()
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 2')
    await until(() => a.state().status === 'streaming')
    a.session.setDraft('later')
    expect(await a.session.submit()).toMatchObject({ outcome: 'queued' })
    expect(a.state().draft).toBe('')
    // Stored as the composer shows it: no draft left to come back.
    expect(w.storageOf()?.entries()).toEqual({})
    await until(() => w.stored(w.key())?.includes('later') === true)
    close(a)

    const reloaded = w.tab('alice', { isNew: false })
    await until(() => describeQueue(reloaded.state()) === '[later:queued]')
    // The composer never showed it: not before the queue was read, not after.
    expect(reloaded.drafts).toEqual([''])
    expect(reloaded.state().canSubmit).toBe(false)
    w.agent.open()
    await until(idleWith(reloaded, 2))
    expect(userTexts(reloaded.state())).toEqual(['/long 2', 'later'])
    expect(w.posts.filter((p) => p.message === 'later')).toHaveLength(1)
  })

  it("whenStopped: 'draft' puts the queue in the draft, and the draft is what a reload shows", async () => {
    const w = world({ whenStopped: 'draft' })
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 3')
    await until(() => a.state().status === 'streaming')
    await a.session.submit('one')
    await a.session.submit('two')
    await until(() => describeQueue(a.state()) === '[one:queued,two:queued]')
    await a.session.stop()
    expect(a.state().draft).toBe('one\n\ntwo')
    expect(a.state().queue).toEqual([])
    expect(Object.values(w.storageOf()?.entries() ?? {})).toEqual(['one\n\ntwo'])
    await until(() => !(w.stored(w.key()) ?? '').includes('one'))
    close(a)

    const reloaded = w.tab('alice', { isNew: false })
    await until(() => reloaded.state().status === 'idle')
    expect(reloaded.drafts).toEqual(['one\n\ntwo'])
    expect(reloaded.state().queue).toEqual([])
  })
})

describe('a browser that refuses IndexedDB [R-QUEUE-CLIENT-MEMORY]', () => {
  it('the queue falls back to this page, says so once, sends what waits, and tries IndexedDB again next time', async () => {
    let opens = 0
    // `indexedDB.open` throws, as in locked-down or private profiles.
    vi.stubGlobal('indexedDB', {
      open() {
        opens++
        throw new DOMException(
          'The user denied permission to access the database.',
          'SecurityError',
        )
      },
    })
    const w = world()
    const a = w.tab('alice', { queue: false })
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 2')
    await until(() => a.state().isRunning)

    const warnings: string[] = []
    const client = createPreviewChatClient({
      headers: { Authorization: 'Bearer alice' },
      scope: 'alice',
      fetch: w.fetch,
      push: false,
      relay: false,
      storage: null,
      lingerMs: 0,
      minReadIntervalMs: 5,
      poll: { baseMs: 5, maxMs: 10 },
      retry: { baseMs: 5, maxMs: 20 },
      onWarning: (message) => warnings.push(message),
      queue: queue(),
    })
    clients.push(client)
    const session = client.session({ projectId: 'p', agentId: 'a', threadId: w.threadId })
    const kept: (boolean | undefined)[] = []
    session.subscribe((state) => {
      if (kept.at(-1) !== state.queueKept) kept.push(state.queueKept)
    })
    await until(() => session.getState().isRunning)
    expect(await session.submit('waits')).toMatchObject({ outcome: 'queued' })
    expect(describeQueue(session.getState())).toBe('[waits:queued]')
    expect(kept).toEqual([true, false])
    expect(warnings.filter((m) => m.includes('kept in this page only'))).toHaveLength(1)

    w.agent.open()
    await until(() => userTexts(session.getState()).includes('waits'))
    await until(() => session.getState().status === 'idle')
    expect(w.posts.filter((p) => p.message === 'waits')).toHaveLength(1)
    // A refused open is not kept: another session of this page tries IndexedDB again.
    const before = opens
    const other = client.session({
      projectId: 'p',
      agentId: 'a',
      threadId: crypto.randomUUID(),
      isNew: true,
    })
    const stop = other.subscribe(() => {})
    await until(() => other.getState().queueKept === false)
    expect(opens).toBeGreaterThan(before)
    stop()
  })

  it('a direct store whose open fails (onerror) is tried again on its next call', async () => {
    let opens = 0
    const factory = {
      open() {
        opens++
        const request = {} as IDBOpenDBRequest & { error: DOMException }
        Object.assign(request, { error: new DOMException('quota', 'QuotaExceededError') })
        queueMicrotask(() => request.onerror?.(new Event('error')))
        return request
      },
    } as unknown as IDBFactory
    const store = indexedDbQueueStore(factory)
    await expect(store.read('k')).rejects.toThrow('quota')
    await expect(store.read('k')).rejects.toThrow('quota')
    expect(opens).toBe(2)
  })
})

describe.each(['memory', 'indexedDB'] as const)(
  'a %s store that opens and reads but refuses every write (a full quota) [R-QUEUE-WRITE-RETRY]',
  (store) => {
    it('the queue works from memory and says so in state, sends what waits once the thread is free, and writes again on a schedule', async () => {
      const w = world({ store })
      const key = w.key()
      const a = w.tab()
      await until(() => a.state().status === 'idle')
      await a.session.submit('/long 2')
      await until(() => a.state().status === 'streaming')
      const kept: (boolean | undefined)[] = []
      a.session.subscribe((state) => {
        if (kept.at(-1) !== state.queueKept) kept.push(state.queueKept)
      })
      // A QuotaExceededError on every commit from now on (IndexedDB's: the transaction aborts).
      w.failWrites(Number.MAX_SAFE_INTEGER)
      expect(await a.session.submit('waits')).toMatchObject({ outcome: 'queued' })
      await until(() => a.state().queueKept === false)
      expect(a.state().error).toBeNull()
      w.agent.open()
      // Sent from memory once the thread is free, though nothing of it could be written.
      await until(idleWith(a, 2))
      expect(userTexts(a.state())).toEqual(['/long 2', 'waits'])
      expect(postsById(w.posts)).toEqual([1, 1])
      // A later Send while idle is a turn, not queued for good.
      expect(await a.session.submit('next')).toMatchObject({ outcome: 'accepted' })
      await until(idleWith(a, 3))
      expect(w.warnings.filter((m) => /could not be written/.test(m))).toHaveLength(1)
      // The store takes writes again: the retry, due on its own schedule (no step of the thread
      // asks for it), writes what this tab kept, and the queue says it is kept again.
      w.failWrites(0)
      await until(() => a.state().queueKept === true)
      expect(kept).toEqual([true, false, true])
      await until(() => w.stored(key)?.includes('"items":[]') === true)
    })
  },
)

describe("another device's items of the server's queue [R-QUEUE-SERVER-ITEMS]", () => {
  it('a phone that has never posted lists what the laptop handed over, from the server’s own word', async () => {
    const w = world({ flavor: 'next-era', whenStopped: 'keep' })
    const laptop = w.tab()
    await until(() => laptop.state().status === 'idle')
    await laptop.session.submit('/long 2')
    await until(() => laptop.state().status === 'streaming')
    await laptop.session.submit('from the laptop')
    await until(() => describeQueue(laptop.state()) === '[from the laptop:queued]')
    await until(() => w.posts.length === 2)

    // Its own storage and locks: it knows nothing of the laptop's queue but what the server says.
    const phone = w.tab('alice', { device: 'phone', isNew: false })
    await until(() => describeQueue(phone.state()) === '[from the laptop:queued]')
    expect(phone.state().queue?.[0]?.id).toMatch(/^queue:/)
    expect(w.posts).toHaveLength(2)
    w.agent.open()
    await until(idleWith(phone, 2))
    expect(phone.queues.at(-1)).toBe('[]')
  })
})

describe('a reload mid-turn with isNew left in the URL [R-QUEUE-CLIENT-READ-FIRST]', () => {
  it('the queue posts nothing until a read shows the thread free, and says nothing of a draft', async () => {
    const w = world()
    const a = w.tab()
    await until(() => a.state().status === 'idle')
    await a.session.submit('/long 2')
    await until(() => a.state().status === 'streaming')
    await a.session.submit('queued before the reload')
    await until(() => w.stored(w.key())?.includes('queued before') === true)
    close(a)

    const reloaded = w.tab('alice', { isNew: true })
    const errors: (string | null)[] = []
    reloaded.session.subscribe((state) => {
      const message = state.error?.message ?? null
      if (errors.at(-1) !== message) errors.push(message)
    })
    await until(() => reloaded.state().isRunning)
    expect(w.posts.map((p) => p.message)).toEqual(['/long 2'])
    w.agent.open()
    await until(idleWith(reloaded, 2))
    expect(w.posts.map((p) => p.message)).toEqual(['/long 2', 'queued before the reload'])
    expect(errors.filter((e) => e !== null)).toEqual([])
  })
})
