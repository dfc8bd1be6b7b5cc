/**
 * The README's examples, run as tests. Each `#region example: name` below appears verbatim in
 * README.md (with the package's own import paths); the last test checks that they match.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  createPreviewChatClient,
  type PreviewChatSession,
  type SessionState,
  type ThreadKey,
} from '@preview-chat/core'
import { queue } from '@preview-chat/core/queue'
import { describe, expect, it, onTestFinished } from 'vitest'
import { memoryQueueStore, readQueue, seedQueue } from '../index'
import { setupPreviewChatServer } from '../vitest'

// #region example: setup
const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })

/** A session of the real core client against the mocked backend, followed until the test ends. */
function openSession(key: ThreadKey & { isNew?: boolean }, user = 'alice') {
  const client = createPreviewChatClient({
    baseUrl: 'http://localhost/rest',
    headers: { authorization: `Bearer ${user}` }, // and so push over SSE, which carries them
  })
  const session = client.session(key)
  onTestFinished(session.subscribe(() => {}))
  return session
}

/** Resolves with the first state of `session` that passes `check`. */
function waitFor(session: PreviewChatSession, check: (state: SessionState) => boolean) {
  return new Promise<SessionState>((resolve) => {
    if (check(session.getState())) return resolve(session.getState())
    const stop = session.subscribe((state) => {
      if (!check(state)) return
      stop()
      resolve(state)
    })
  })
}
// #endregion

describe('README examples [R-MSW-REAL-BACKEND R-RECOVER-FOLLOW-RECORDED]', () => {
  // #region example: recovery
  it('shows the answer after the stream was cut, and sends the message once', async () => {
    const threadId = crypto.randomUUID()
    const session = openSession({ projectId: 'p', agentId: 'a', threadId, isNew: true })
    const statuses: string[] = []
    session.subscribe((state) => statuses.push(state.status))

    void chat.mock.cutNextStream({ afterEvents: 2 }) // the client's copy ends mid-turn
    session.setDraft('Hello there')
    await session.submit()

    const done = await waitFor(session, (s) => s.messages[1]?.executionStatus === 'success')
    expect(statuses).toContain('recovering')
    expect(done.messages[1]?.content.at(-1)).toEqual({
      type: 'text',
      text: 'You said (2 words): "Hello there"',
    })
    expect(chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(1)
  })
  // #endregion

  // #region example: failNextReads
  it('keeps the transcript when reads fail', async () => {
    const { key } = await chat.mock.seed.thread({ messages: ['Hello'] })
    const session = openSession(key)
    await waitFor(session, (s) => s.status === 'idle')

    chat.mock.failNextReads(1, { status: 503 }) // or failNextReads(1, 'network-error')
    void session.refresh()
    const failed = await waitFor(session, (s) => s.readError !== null)
    expect(failed.readError?.status).toBe(503)
    expect(failed.messages).toHaveLength(2) // the last known transcript stays
  })
  // #endregion

  // #region example: delayReads
  it('shows recovering while a slow read is on its way', async () => {
    const { key } = await chat.mock.seed.thread()
    chat.mock.delayReads(50)
    const session = openSession(key)
    expect(session.getState().status).toBe('recovering')
    await waitFor(session, (s) => s.status === 'idle')
  })
  // #endregion

  // #region example: holdTurns
  it('streams one step per release', async () => {
    const turn = chat.mock.holdTurns()
    const session = openSession({ projectId: 'p', agentId: 'a', threadId: 't1', isNew: true })
    session.setDraft('/long 3') // the scripted agent: three text deltas, one per step
    await session.submit()

    await turn.step()
    await waitFor(session, (s) => s.messages[1]?.content[0]?.type === 'text')
    expect(session.getState().status).toBe('streaming')
    turn.release() // run on to the end
    await waitFor(session, (s) => s.status === 'idle')
  })
  // #endregion

  // #region example: secondUser
  it("hides alice's thread from bob", async () => {
    const { key } = await chat.mock.seed.thread({ user: 'alice' })
    const asBob = openSession(key, 'bob')
    const state = await waitFor(asBob, (s) => s.notFound)
    expect(state.messages).toEqual([])
  })
  // #endregion

  // #region example: runningTurn
  it('follows a turn that was already running, and blocks a new message', async () => {
    const { key, executionId, turn } = await chat.mock.seed.runningTurn({ steps: 2 })
    const session = openSession(key)
    const following = await waitFor(session, (s) => s.status === 'following')
    expect(following.activeExecutionId).toBe(executionId)
    session.setDraft('Are you done?')
    expect(await session.submit()).toEqual({ outcome: 'busy' })

    turn.release()
    await waitFor(session, (s) => s.status === 'idle')
  })
  // #endregion

  // #region example: suspension
  it('answers a suspended approval', async () => {
    const suspended = await chat.mock.seed.suspension()
    const session = openSession(suspended.key)
    await waitFor(session, (s) => s.openSuspensions.length === 1)

    await session.resume(suspended, { approved: true })
    await waitFor(session, (s) => s.status === 'idle' && s.openSuspensions.length === 0)
  })
  // #endregion

  // #region example: truncatedDelegation
  it('marks a delegation beyond the 4,000-character budget as truncated', async () => {
    const { key } = await chat.mock.seed.truncatedDelegation({ chars: 5000 })
    const session = openSession(key)
    const state = await waitFor(session, (s) => s.status === 'idle')
    const delegation = state.messages[1]?.content.find((part) => part.type === 'tool-call')
    expect(delegation).toMatchObject({ toolName: 'delegate', childTrace: { truncated: true } })
  })
  // #endregion

  // #region example: seedQueue
  it('sends what the last page queued, once each, in order', async () => {
    const { key, turn } = await chat.mock.seed.runningTurn({ message: '/long 2' })
    const store = memoryQueueStore() // the page's IndexedDB
    await seedQueue({ scope: 'alice', ...key, store, messages: ['first', 'second'] })

    const client = createPreviewChatClient({
      baseUrl: 'http://localhost/rest',
      headers: { authorization: 'Bearer alice' },
      scope: 'alice', // part of the queue's storage key: the scope seedQueue was given
      queue: queue({ store }),
    })
    const session = client.session(key)
    onTestFinished(session.subscribe(() => {}))
    const shown = await waitFor(session, (s) => s.queue?.length === 2)
    expect(shown.queue?.map((m) => `${m.text}:${m.status}`)).toEqual([
      'first:queued',
      'second:queued',
    ])

    turn.release()
    const done = await waitFor(
      session,
      (s) => s.status === 'idle' && s.queue?.length === 0 && s.messages.length === 6,
    )
    expect(done.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
      ['/long 2', 'first', 'second'].map((text) => [{ type: 'text', text }]),
    )
    expect((await readQueue({ scope: 'alice', ...key, store })).messages).toEqual([])
    expect(chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(3)
  })
  // #endregion
})

describe('README.md [R-MSW-README-RUNS]', () => {
  it('shows each example exactly as it runs here', () => {
    const here = readFileSync(import.meta.filename, 'utf8')
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8')
    const regions = [
      ...here.matchAll(/( *)\/\/ #region example: (\w+)\n([\s\S]*?)\n\s*\/\/ #endregion/g),
    ]
    expect(regions.length).toBeGreaterThanOrEqual(9)
    const blocks = new Map(
      [...readme.matchAll(/<!-- example: (\w+) -->\n+```ts\n([\s\S]*?)\n```/g)].map((m) => [
        m[1],
        m[2],
      ]),
    )
    for (const [, indent = '', name, code = ''] of regions) {
      const dedented = code.replace(new RegExp(`^${indent}`, 'gm'), '')
      expect(blocks.get(name ?? ''), `README example "${name}"`).toContain(dedented)
    }
  })
})
