/**
 * The client's message queue (`queue()` of `@preview-chat/core/queue`, issue 29) against the
 * reference backend, in process: tabs are clients of one user sharing one storage and one set of
 * locks, as a browser's tabs share localStorage and Web Locks. The agent's every pause waits on a
 * gate the test opens, so a turn runs exactly as long as the test wants (no test here depends on
 * the machine's speed). Each scenario checks the queue's states in order, and the POSTs by
 * `messageId`: every queued message POSTed once, recorded once, in the order written.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import type { FlavorName } from '../../../server/src/flavor/types'
import { createPreviewChatClient, type PreviewChatClient, type SessionState } from '../index'
import { documentLocks } from '../effects/queueHost'
import { memoryQueueStore, queue, queueStorageKey, type WhenStopped } from '../queue'
import { createTabs } from './harness'

let backend: PreviewChatBackend | null = null
const clients: PreviewChatClient[] = []
afterEach(() => {
  for (const client of clients.splice(0)) client.dispose()
  backend?.close()
  backend = null
})

const auth: Record<FlavorName, (user: string) => Record<string, string>> = {
  spec: (user) => ({ Authorization: `Bearer ${user}` }),
  'n8n-2.41': (user) => ({ cookie: `n8n-auth=${user}`, 'browser-id': `browser-${user}` }),
  'next-era': (user) => ({ Authorization: `Bearer ${user}` }),
}

/** Every pause of the agent waits here while the gate is shut (and rejects on a Stop). */
function gate() {
  let open = false
  const waiting = new Set<() => void>()
  return {
    sleep: (_ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason as Error)
        if (open) return resolve()
        const go = () => {
          waiting.delete(go)
          resolve()
        }
        waiting.add(go)
        signal.addEventListener('abort', () => {
          waiting.delete(go)
          reject(signal.reason as Error)
        })
      }),
    open() {
      open = true
      for (const go of [...waiting]) go()
    },
    shut() {
      open = false
    },
  }
}

interface WorldOptions {
  flavor?: FlavorName
  whenStopped?: WhenStopped
  /** How long a tab's unanswered POST holds the other tabs' gates (a closed tab's, here). */
  submitTimeoutMs?: number
}

function world({ flavor = 'spec', whenStopped, submitTimeoutMs }: WorldOptions = {}) {
  const agent = gate()
  backend = createPreviewChatBackend({ flavor, deltaMs: 0, snapshotMs: 5, sleep: agent.sleep })
  const server = backend
  const store = memoryQueueStore()
  /** What the store holds for `key` now (kept in step by watching it). */
  const held = new Map<string, string | null>()
  const watched = new Set<string>()
  const watchKey = (key: string) => {
    const refresh = () => void store.read(key).then((raw) => held.set(key, raw))
    store.watch(key, refresh)
    refresh()
  }
  const locks = documentLocks()
  /** Every chat POST's `messageId` and text, in order. */
  const posts: { messageId?: string; message: string }[] = []
  /** A POST to hold before the server sees it (a tab that closes mid-send): its release. */
  let holdNextPost: ((release: () => void) => void) | null = null
  const warnings: string[] = []
  const threadId = crypto.randomUUID()
  // Each user's tabs hear each other (BroadcastChannel's rule, in memory); the first tab of a user
  // minted the thread (`isNew`), the others read it.
  const relays = new Map<string, ReturnType<typeof createTabs>>()
  const tab = (user = 'alice') => {
    const isNew = !relays.has(user)
    if (isNew) relays.set(user, createTabs())
    const client = createPreviewChatClient({
      headers: auth[flavor](user),
      scope: user,
      fetch: async (input, init) => {
        const request = new Request(new URL(String(input), 'http://x'), init)
        if (request.method === 'POST' && request.url.endsWith('/chat')) {
          const body = JSON.parse(String(init?.body)) as { messageId?: string; message?: string }
          if (body.message !== undefined) {
            posts.push({
              ...(body.messageId && { messageId: body.messageId }),
              message: body.message,
            })
            const hold = holdNextPost
            holdNextPost = null
            if (hold) await new Promise<void>((release) => hold(release))
          }
        }
        return server.fetch(request)
      },
      push: false,
      relay: relays.get(user)?.relay() ?? false,
      storage: null,
      lingerMs: 0,
      minReadIntervalMs: 5,
      poll: { baseMs: 5, maxMs: 10 },
      retry: { baseMs: 5, maxMs: 20 },
      ...(submitTimeoutMs && { submitTimeoutMs }),
      onWarning: (message) => warnings.push(message),
      queue: queue({ store, locks, ...(whenStopped && { whenStopped }) }),
    })
    clients.push(client)
    const session = client.session({ projectId: 'p', agentId: 'a', threadId, isNew })
    /** The queue's states as this tab showed them, each new one once. */
    const queues: string[] = []
    const stop = session.subscribe((state) => {
      const shown = describeQueue(state)
      if (queues.at(-1) !== shown) queues.push(shown)
    })
    return { client, session, queues, stop, state: () => session.getState() }
  }
  return {
    agent,
    tab,
    posts,
    warnings,
    /** What the store holds under `key` now, as last read (`watchKey` first). */
    stored: (key: string) => held.get(key) ?? null,
    watchKey,
    /** Writes `raw` under `key` as another tab would have. */
    seed: (key: string, raw: string) => store.update(key, () => raw),
    holdNextPost: (hold: (release: () => void) => void) => (holdNextPost = hold),
    key: (user = 'alice') => {
      const key = queueStorageKey({ scope: user, projectId: 'p', agentId: 'a', threadId })
      if (!watched.has(key)) {
        watched.add(key)
        watchKey(key)
      }
      return key
    },
  }
}

/** `text:status` of each queued message, `|paused` when paused: one line per state. */
function describeQueue(state: SessionState): string {
  const items = (state.queue ?? []).map((item) => `${item.text}:${item.status}`).join(',')
  return `[${items}]${state.queuePaused ? '|paused' : ''}`
}

const userTexts = (state: SessionState) =>
  state.messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content.map((part) => (part.type === 'text' ? part.text : '')).join(''))

async function until(done: () => boolean) {
  for (let i = 0; i < 3_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 2))
  expect(done()).toBe(true)
}

const idleWith = (tab: { state(): SessionState }, users: number) => () => {
  const state = tab.state()
  return (
    state.status === 'idle' &&
    userTexts(state).length === users &&
    state.messages.at(-1)?.executionStatus === 'success' &&
    (state.queue ?? []).length === 0
  )
}

/** How many POSTs each queued message's id got. */
const postsById = (posts: { messageId?: string }[]) => {
  const counts = new Map<string, number>()
  for (const post of posts)
    if (post.messageId) counts.set(post.messageId, (counts.get(post.messageId) ?? 0) + 1)
  return [...counts.values()]
}

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
