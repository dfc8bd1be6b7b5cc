/**
 * The store's contract, as a test suite any implementation runs (`describeStoreSuite('postgres',
 * …)`): `makeStore()` gives an empty store for each test. It pins what the routes rely on, each
 * operation's atomicity included (two mains calling at once: one wins).
 */
import type { Message, SuspendedPayload } from '@preview-chat/core/contract'
import { afterEach, describe, expect, it } from 'vitest'
import type {
  ExecutionDraft,
  PreviewChatStore,
  ThreadKey,
  ThreadScope,
  TurnAdmission,
} from './types'

/** What `makeStore` gives: the store, and how to release what it holds. */
export interface StoreFixture {
  store: PreviewChatStore
  close(): Promise<void>
}

const scope: ThreadScope = { ownerId: 'alice', projectId: 'p1', agentId: 'a1' }
const key = (threadId = 't1', owner: Partial<ThreadScope> = {}): ThreadKey => ({
  ...scope,
  ...owner,
  threadId,
})
let drafts = 0
const draft = (kind: ExecutionDraft['kind'] = 'message', mainId = 'main-a'): ExecutionDraft => ({
  id: `e${++drafts}`,
  mainId,
  kind,
  startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, drafts)).toISOString(),
})
const admission = (overrides: Partial<TurnAdmission> = {}): TurnAdmission => ({
  thread: key(),
  create: true,
  exclusive: true,
  execution: draft(),
  ...overrides,
})
const message = (executionId: string, role: Message['role'], text: string): Message => ({
  id: `${executionId}:${role}`,
  role,
  content: [{ type: 'text', text }],
  executionId,
  executionStatus: 'running',
  createdAt: '2026-01-01T00:00:00.000Z',
})
const suspension = (runId = 'run-1'): SuspendedPayload => ({
  toolCallId: `call-${runId}`,
  runId,
  toolName: 'approve',
  input: { amount: 3 },
})
const ended = (executionId: string, overrides: object = {}) => ({
  executionId,
  status: 'success' as const,
  endedAt: '2026-01-01T00:01:00.000Z',
  messages: [],
  ...overrides,
})

/** Admits a turn that must be admitted; returns its execution id. */
async function admitted(store: PreviewChatStore, overrides: Partial<TurnAdmission> = {}) {
  const result = await store.admitTurn(admission(overrides))
  if (!result.ok) throw new Error(`expected an admission, got ${result.reason}`)
  return result.execution.id
}

/** A thread whose turn suspended on `runId`'s tool call; returns the suspended execution's id. */
async function suspended(store: PreviewChatStore, runId = 'run-1') {
  const id = await admitted(store)
  const payload = suspension(runId)
  const assistant: Message = {
    ...message(id, 'assistant', ''),
    content: [
      {
        type: 'tool-call',
        toolName: 'approve',
        toolCallId: payload.toolCallId,
        input: {},
        suspendPayload: payload,
      },
    ],
  }
  await store.endExecution(ended(id, { messages: [assistant], suspension: payload }))
  return id
}

/** JSON-able: what crosses the interface survives a trip through JSON unchanged. */
const jsonable = (value: unknown) => expect(JSON.parse(JSON.stringify(value))).toEqual(value)

export function describeStoreSuite(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`the store contract: ${name}`, () => {
    let fixture: StoreFixture | undefined
    afterEach(async () => {
      await fixture?.close()
      fixture = undefined
    })
    const make = async () => (fixture = await makeStore()).store
    describeAdmission(make)
    describeClaims(make)
    describeRecording(make)
    describeRuns(make)
    describeQueue(make)
    describeLeases(make)
    describeSteering(make)
  })
}

function describeAdmission(make: () => Promise<PreviewChatStore>): void {
  describe('admitting a turn', () => {
    it('creates the thread and records the execution as running, active from the start', async () => {
      const store = await make()
      expect(await store.readThread(key())).toBeUndefined()
      const execution = draft()
      const result = await store.admitTurn(admission({ execution }))
      expect(result).toMatchObject({
        ok: true,
        thread: { id: 't1', ...scope, messages: [], openSuspensions: [], activeExecutionId: null },
        execution: {
          id: execution.id,
          threadId: 't1',
          ...scope,
          mainId: 'main-a',
          kind: 'message',
          status: 'running',
          startedAt: execution.startedAt,
        },
      })
      jsonable(result)
      expect(await store.readThread(key())).toMatchObject({ activeExecutionId: execution.id })
      expect(await store.readExecution(execution.id)).toMatchObject({ status: 'running' })
    })

    it('refuses an unknown thread unless asked to create it', async () => {
      const store = await make()
      expect(await store.admitTurn(admission({ create: false }))).toEqual({
        ok: false,
        reason: 'thread_not_found',
      })
      expect(await store.listThreads()).toEqual([])
    })

    it('scopes thread ids to their owner, project and agent', async () => {
      const store = await make()
      await admitted(store)
      expect(await store.readThread(key('t1', { ownerId: 'bob' }))).toBeUndefined()
      expect(await store.readThread(key('t1', { agentId: 'a2' }))).toBeUndefined()
      // Bob's thread of the same id is his own: admitted beside Alice's running one.
      await admitted(store, { thread: key('t1', { ownerId: 'bob' }), execution: draft() })
      expect(await store.listThreads()).toHaveLength(2)
    })

    it('one running turn per thread: a second admission is refused, nothing recorded', async () => {
      const store = await make()
      const first = await admitted(store)
      const second = draft()
      expect(await store.admitTurn(admission({ execution: second, messageId: 'm2' }))).toEqual({
        ok: false,
        reason: 'turn_already_running',
      })
      expect(await store.readExecution(second.id)).toBeUndefined()
      expect(await store.hasMessageId(key(), 'm2')).toBe(false)
      expect((await store.readThread(key()))?.activeExecutionId).toBe(first)
    })

    it('two admissions at once for a new thread: exactly one wins', async () => {
      const store = await make()
      const results = await Promise.all([
        store.admitTurn(admission()),
        store.admitTurn(admission({ execution: draft() })),
      ])
      expect(results.filter((result) => result.ok)).toHaveLength(1)
      expect(results.find((result) => !result.ok)).toEqual({
        ok: false,
        reason: 'turn_already_running',
      })
      expect(await store.listThreads()).toHaveLength(1)
      expect(await store.listExecutions()).toHaveLength(1)
    })

    it('a non-exclusive admission races: the later execution becomes the active one', async () => {
      const store = await make()
      await admitted(store, { exclusive: false })
      const later = await admitted(store, { exclusive: false, execution: draft() })
      expect((await store.readThread(key()))?.activeExecutionId).toBe(later)
      expect(await store.countRunning('alice')).toBe(2)
    })
  })
}

function describeClaims(make: () => Promise<PreviewChatStore>): void {
  describe('admission limits', () => {
    it('claims the messageId: the same id again is a duplicate, anywhere, even at once', async () => {
      const store = await make()
      const results = await Promise.all([
        store.admitTurn(admission({ messageId: 'm1', thread: key('t9') })),
        store.admitTurn(
          admission({ messageId: 'm1', thread: key('t9'), exclusive: false, execution: draft() }),
        ),
      ])
      expect(results.map((result) => result.ok).toSorted()).toEqual([false, true])
      expect(results.find((result) => !result.ok)).toEqual({
        ok: false,
        reason: 'duplicate_message',
      })
      expect(await store.hasMessageId(key('t9'), 'm1')).toBe(true)
      expect(await store.hasMessageId(key('t9', { ownerId: 'bob' }), 'm1')).toBe(false)
    })

    it('a refused admission of a new thread creates no thread', async () => {
      const store = await make()
      await admitted(store, { thread: key('busy'), messageId: 'm1' })
      expect(await store.admitTurn(admission({ thread: key('busy'), messageId: 'm1' }))).toEqual({
        ok: false,
        reason: 'duplicate_message',
      })
      expect(
        await store.admitTurn(admission({ thread: key('new'), maxRunningPerOwner: 1 })),
      ).toEqual({ ok: false, reason: 'too_many_turns' })
      expect(await store.readThread(key('new'))).toBeUndefined()
    })

    it("counts an owner's running turns on every main, and refuses past maxRunningPerOwner", async () => {
      const store = await make()
      await admitted(store, { thread: key('t1'), execution: draft('message', 'main-a') })
      const second = await admitted(store, {
        thread: key('t2'),
        execution: draft('message', 'main-b'),
        maxRunningPerOwner: 2,
      })
      expect(await store.countRunning('alice')).toBe(2)
      expect(
        await store.admitTurn(
          admission({ thread: key('t3'), maxRunningPerOwner: 2, execution: draft() }),
        ),
      ).toEqual({ ok: false, reason: 'too_many_turns' })
      // Another user's turns are not counted; an ended turn frees its place.
      await admitted(store, {
        thread: key('t1', { ownerId: 'bob' }),
        maxRunningPerOwner: 1,
        execution: draft(),
      })
      await store.endExecution(ended(second))
      await admitted(store, { thread: key('t3'), maxRunningPerOwner: 2, execution: draft() })
      const onA = await store.listRunning('main-a')
      expect(onA.map((each) => `${each.ownerId}@${each.mainId}`).toSorted()).toEqual([
        'alice@main-a',
        'alice@main-a',
        'bob@main-a',
      ])
      expect(await store.listRunning('main-b')).toEqual([])
    })
  })
}

function describeRecording(make: () => Promise<PreviewChatStore>): void {
  describe('recording and ending a turn', () => {
    it('records snapshot batches: a message replaces its earlier recording, a new one joins', async () => {
      const store = await make()
      const id = await admitted(store)
      await store.recordMessages(id, [message(id, 'user', 'hi'), message(id, 'assistant', 'He')])
      await store.recordMessages(id, [message(id, 'assistant', 'Hello')])
      await store.recordMessages(id, [{ ...message(id, 'user', 'steer'), id: `${id}:steer:1` }])
      const thread = await store.readThread(key())
      expect(thread?.messages.map((each) => [each.id, each.content])).toEqual([
        [`${id}:user`, [{ type: 'text', text: 'hi' }]],
        [`${id}:assistant`, [{ type: 'text', text: 'Hello' }]],
        [`${id}:steer:1`, [{ type: 'text', text: 'steer' }]],
      ])
    })

    it('ends atomically: status, error, every message of the execution, the thread free', async () => {
      const store = await make()
      const id = await admitted(store)
      await store.recordMessages(id, [
        message(id, 'user', 'hi'),
        { ...message(id, 'user', 's'), id: 'steered' },
      ])
      const end = ended(id, {
        status: 'error',
        error: 'The agent failed.',
        errorCode: 'agent_crashed',
        messages: [message(id, 'assistant', 'partial')],
      })
      expect(await store.endExecution(end)).toMatchObject({
        id,
        status: 'error',
        error: 'The agent failed.',
        errorCode: 'agent_crashed',
        endedAt: end.endedAt,
      })
      const thread = await store.readThread(key())
      expect(thread?.activeExecutionId).toBeNull()
      expect(
        thread?.messages.map((each) => [each.id, each.executionStatus, each.executionError]),
      ).toEqual([
        [`${id}:user`, 'error', 'The agent failed.'],
        ['steered', 'error', 'The agent failed.'],
        [`${id}:assistant`, 'error', 'The agent failed.'],
      ])
      expect(await store.readExecution(id)).toMatchObject({
        status: 'error',
        errorCode: 'agent_crashed',
      })
    })

    it('an end clears only its own active id; a second end or a late batch changes nothing', async () => {
      const store = await make()
      const first = await admitted(store, { exclusive: false })
      const later = await admitted(store, { exclusive: false, execution: draft() })
      await store.endExecution(ended(first, { status: 'cancelled' }))
      expect((await store.readThread(key()))?.activeExecutionId).toBe(later)
      expect(await store.endExecution(ended(first, { status: 'success' }))).toBeUndefined()
      expect(await store.readExecution(first)).toMatchObject({ status: 'cancelled' })
      await store.recordMessages(first, [message(first, 'assistant', 'late')])
      expect((await store.readThread(key()))?.messages).toEqual([])
      expect(await store.endExecution(ended('unknown'))).toBeUndefined()
    })

    it('two ends at once: one is recorded', async () => {
      const store = await make()
      const id = await admitted(store)
      const results = await Promise.all([
        store.endExecution(ended(id, { status: 'cancelled' })),
        store.endExecution(ended(id, { status: 'success' })),
      ])
      expect(results.filter((result) => result !== undefined)).toHaveLength(1)
      expect((await store.readExecution(id))?.status).toBe(results.find(Boolean)?.status)
    })

    it('reads are copies: changing what was read changes nothing stored', async () => {
      const store = await make()
      const id = await admitted(store)
      const recorded = message(id, 'user', 'hi')
      await store.recordMessages(id, [recorded])
      recorded.content = []
      const thread = await store.readThread(key())
      thread?.messages.splice(0)
      const execution = await store.readExecution(id)
      if (execution) execution.status = 'success'
      expect((await store.readThread(key()))?.messages[0]?.content).toEqual([
        { type: 'text', text: 'hi' },
      ])
      expect((await store.readExecution(id))?.status).toBe('running')
      jsonable(await store.listExecutions())
      jsonable(await store.listThreads())
    })
  })
}

function describeRuns(make: () => Promise<PreviewChatStore>): void {
  describe('suspended runs', () => {
    it('a suspension opens its run in the thread, readable in its own scope only', async () => {
      const store = await make()
      const id = await suspended(store)
      const thread = await store.readThread(key())
      expect(thread?.openSuspensions).toEqual([
        { toolCallId: 'call-run-1', runId: 'run-1', suspendPayload: suspension() },
      ])
      expect(await store.readRun('run-1', scope)).toMatchObject({
        runId: 'run-1',
        executionId: id,
        threadId: 't1',
        state: 'open',
        payload: suspension(),
      })
      expect(await store.readRun('run-1', { ...scope, ownerId: 'bob' })).toBeUndefined()
      expect(await store.readRun('run-1', { ...scope, agentId: 'a2' })).toBeUndefined()
    })

    it('a run resumes once: closed in the thread, a new execution active', async () => {
      const store = await make()
      await suspended(store)
      const resumption = { runId: 'run-1', scope, toolCallId: 'call-run-1', exclusive: true }
      const wrongCall = await store.resumeRun({
        ...resumption,
        toolCallId: 'other',
        execution: draft('resume'),
      })
      expect(wrongCall).toEqual({ ok: false, reason: 'run_not_found' })
      const result = await store.resumeRun({ ...resumption, execution: draft('resume') })
      if (!result.ok) throw new Error(result.reason)
      expect(result.execution).toMatchObject({ kind: 'resume', status: 'running' })
      const thread = await store.readThread(key())
      expect(thread?.openSuspensions).toEqual([])
      expect(thread?.activeExecutionId).toBe(result.execution.id)
      expect(JSON.stringify(thread?.messages)).not.toContain('suspendPayload')
      expect(await store.resumeRun({ ...resumption, execution: draft('resume') })).toEqual({
        ok: false,
        reason: 'run_closed',
        state: 'resumed',
      })
    })

    it('two resumes at once: one wins', async () => {
      const store = await make()
      await suspended(store)
      const resumption = { runId: 'run-1', scope, toolCallId: 'call-run-1', exclusive: true }
      const results = await Promise.all([
        store.resumeRun({ ...resumption, execution: draft('resume') }),
        store.resumeRun({ ...resumption, execution: draft('resume') }),
      ])
      expect(results.filter((result) => result.ok)).toHaveLength(1)
      expect(await store.countRunning('alice')).toBe(1)
    })

    it('a resume waits for the thread: refused while a turn runs, the run still open', async () => {
      const store = await make()
      await suspended(store)
      await admitted(store, { execution: draft() })
      const result = await store.resumeRun({
        runId: 'run-1',
        scope,
        toolCallId: 'call-run-1',
        exclusive: true,
        execution: draft('resume'),
      })
      expect(result).toEqual({ ok: false, reason: 'turn_already_running' })
      expect((await store.readRun('run-1', scope))?.state).toBe('open')
    })

    it('a cancelled run is closed, its tool call rejected; cancelling again answers false', async () => {
      const store = await make()
      await suspended(store)
      expect(await store.cancelRun('run-1', { ...scope, ownerId: 'bob' }, 'no')).toEqual({
        run: undefined,
        cancelled: false,
      })
      expect(
        await store.cancelRun('run-1', scope, 'The suspended run was cancelled.'),
      ).toMatchObject({ run: { state: 'cancelled' }, cancelled: true })
      const thread = await store.readThread(key())
      expect(thread?.openSuspensions).toEqual([])
      expect(thread?.messages[0]?.content[0]).toMatchObject({
        type: 'tool-call',
        state: 'rejected',
        error: 'The suspended run was cancelled.',
      })
      expect(await store.cancelRun('run-1', scope, 'again')).toMatchObject({
        cancelled: false,
        run: { state: 'cancelled' },
      })
      const resumption = {
        runId: 'run-1',
        scope,
        toolCallId: 'call-run-1',
        exclusive: true,
        execution: draft('resume'),
      }
      expect(await store.resumeRun(resumption)).toEqual({
        ok: false,
        reason: 'run_closed',
        state: 'cancelled',
      })
    })
  })
}

/** Enqueues an item that must be accepted. */
const enqueued = async (
  store: PreviewChatStore,
  text: string,
  threadId = 't1',
  messageId?: string,
) => {
  const result = await store.enqueue({
    thread: key(threadId),
    create: true,
    message: text,
    createdAt: '2026-01-01T00:00:00.000Z',
    ...(messageId !== undefined && { messageId }),
  })
  if (!result.ok) throw new Error(result.reason)
  return result.item
}
/** The thread's queue as `message:state`, in queue order. */
const order = async (store: PreviewChatStore, threadId = 't1') =>
  (await store.readQueue(key(threadId))).map((item) => `${item.message}:${item.state}`)

function describeQueue(make: () => Promise<PreviewChatStore>): void {
  describe('the queue (next-era)', () => {
    it('enqueues pending items under numeric ids unique in the store; claims messageIds', async () => {
      const store = await make()
      const ids = [
        (await enqueued(store, 'a', 't1', 'm1')).id,
        (await enqueued(store, 'b', 't2')).id,
        (await enqueued(store, 'c')).id,
      ]
      expect(ids.every((id) => /^[1-9]\d*$/.test(id))).toBe(true)
      expect(new Set(ids).size).toBe(3)
      expect(
        await store.enqueue({
          thread: key(),
          create: true,
          message: 'again',
          messageId: 'm1',
          createdAt: 'x',
        }),
      ).toEqual({ ok: false, reason: 'duplicate_message' })
      expect(
        await store.enqueue({ thread: key('none'), create: false, message: 'x', createdAt: 'x' }),
      ).toEqual({ ok: false, reason: 'thread_not_found' })
      expect(await order(store)).toEqual(['a:pending', 'c:pending'])
      expect(await store.readQueue(key('t1', { ownerId: 'bob' }))).toEqual([])
    })

    it('takes up the first pending item once the thread is free, one at a time', async () => {
      const store = await make()
      await enqueued(store, 'a')
      await enqueued(store, 'b')
      const [first, second] = await Promise.all([
        store.takeUpNext(key(), draft()),
        store.takeUpNext(key(), draft()),
      ])
      const taken = first ?? second
      expect([first, second].filter(Boolean)).toHaveLength(1)
      expect(taken?.item).toMatchObject({
        message: 'a',
        state: 'started',
        executionId: taken?.execution.id,
      })
      expect((await store.readThread(key()))?.activeExecutionId).toBe(taken?.execution.id)
      expect(await order(store)).toEqual(['a:started', 'b:pending'])
      if (!taken) throw new Error('nothing taken up')
      await store.endExecution(ended(taken.execution.id, { suspension: suspension() }))
      // An open suspension holds the queue too.
      expect(await store.takeUpNext(key(), draft())).toBeUndefined()
      await store.cancelRun('run-1', scope, 'cancelled')
      expect((await store.takeUpNext(key(), draft()))?.item.message).toBe('b')
      expect(await store.takeUpNext(key(), draft())).toBeUndefined()
    })

    it('changes pending items only: edit, remove, reorder with the expected order', async () => {
      const store = await make()
      const [a, b, c] = [
        await enqueued(store, 'a'),
        await enqueued(store, 'b'),
        await enqueued(store, 'c'),
      ]
      expect(await store.changeQueued(key(), a.id, { kind: 'edit', message: 'A' })).toMatchObject({
        ok: true,
        item: { message: 'A' },
      })
      const stale = {
        kind: 'reorder',
        targetQueueId: a.id,
        expectedQueueIds: [b.id, a.id, c.id],
      } as const
      expect(await store.changeQueued(key(), c.id, stale)).toEqual({
        ok: false,
        reason: 'queue_changed',
      })
      const reorder = {
        kind: 'reorder',
        targetQueueId: a.id,
        expectedQueueIds: [a.id, b.id, c.id],
      } as const
      expect(await store.changeQueued(key(), c.id, reorder)).toMatchObject({ ok: true })
      expect(await order(store)).toEqual(['c:pending', 'A:pending', 'b:pending'])
      expect(
        await store.changeQueued(key(), b.id, {
          kind: 'reorder',
          targetQueueId: '999',
          expectedQueueIds: [c.id, a.id, b.id],
        }),
      ).toEqual({ ok: false, reason: 'target_not_queued' })
      expect(await store.changeQueued(key(), b.id, { kind: 'remove' })).toMatchObject({
        ok: true,
        item: { state: 'removed' },
      })
      expect(await store.changeQueued(key(), b.id, { kind: 'edit', message: 'x' })).toEqual({
        ok: false,
        reason: 'not_found',
      })
      expect(await store.changeQueued(key(), '999', { kind: 'remove' })).toEqual({
        ok: false,
        reason: 'not_found',
      })
      await store.takeUpNext(key(), draft())
      expect(await store.changeQueued(key(), c.id, { kind: 'edit', message: 'x' })).toEqual({
        ok: false,
        reason: 'started',
      })
    })
  })
}

function describeSteering(make: () => Promise<PreviewChatStore>): void {
  describe('steering (next-era)', () => {
    it('steers into the active message execution only; steers join once or go back', async () => {
      const store = await make()
      const running = await admitted(store)
      const [a, b] = [await enqueued(store, 'a'), await enqueued(store, 'b')]
      expect(
        await store.changeQueued(key(), a.id, { kind: 'steer', executionId: 'other' }),
      ).toEqual({ ok: false, reason: 'not_steerable' })
      expect(
        await store.changeQueued(key(), a.id, { kind: 'steer', executionId: running }),
      ).toMatchObject({ ok: true, item: { state: 'steering', steeringExecutionId: running } })
      expect(await store.changeQueued(key(), a.id, { kind: 'remove' })).toEqual({
        ok: false,
        reason: 'steering',
      })
      await store.changeQueued(key(), b.id, { kind: 'steer', executionId: running })
      expect((await store.takeSteers(key(), running)).map((item) => item.message)).toEqual([
        'a',
        'b',
      ])
      expect(await store.takeSteers(key(), running)).toEqual([])
      expect(await order(store)).toEqual(['a:steered', 'b:steered'])
      const c = await enqueued(store, 'c')
      await store.changeQueued(key(), c.id, { kind: 'steer', executionId: running })
      await store.endExecution(ended(running, { status: 'cancelled' }))
      expect(await store.releaseSteers(key(), running)).toBe(1)
      expect(await order(store)).toEqual(['a:steered', 'b:steered', 'c:pending'])
    })
  })
}

function describeLeases(make: () => Promise<PreviewChatStore>): void {
  const lost = { error: 'The server running this turn stopped.', errorCode: 'instance_lost' }
  const live = 60_000

  describe("leases: a dead main's turns end [R-STORE-LEASE]", () => {
    it('ends the running executions of a lapsed or absent lease, keeping what was recorded', async () => {
      const store = await make()
      await store.renewLease('main-b', live)
      const onA = await admitted(store, { execution: draft('message', 'main-a') })
      const onB = await admitted(store, {
        thread: key('t2'),
        execution: draft('message', 'main-b'),
      })
      const never = await admitted(store, {
        thread: key('t3'),
        execution: draft('message', 'main-c'),
      })
      await store.recordMessages(onA, [message(onA, 'user', 'hi'), message(onA, 'assistant', 'So')])
      // main-a renewed once, then stopped: its lease lapses (a TTL of 0: at once). main-c never held one.
      await store.renewLease('main-a', 0)
      const ended = await store.endOrphaned(lost)
      expect(ended.map((each) => each.id).toSorted()).toEqual([onA, never].toSorted())
      expect(ended.find((each) => each.id === onA)).toMatchObject({
        status: 'error',
        ...lost,
        endedAt: expect.any(String),
      })
      jsonable(ended)
      const thread = await store.readThread(key())
      expect(thread?.activeExecutionId).toBeNull()
      expect(
        thread?.messages.map((each) => [each.content, each.executionStatus, each.executionError]),
      ).toEqual([
        [[{ type: 'text', text: 'hi' }], 'error', lost.error],
        [[{ type: 'text', text: 'So' }], 'error', lost.error],
      ])
      expect(await store.readExecution(onB)).toMatchObject({ status: 'running' })
      expect(await store.endOrphaned(lost)).toEqual([])
      // The gate reopens: a new message of that thread runs on a live main.
      await admitted(store, { execution: draft('message', 'main-b') })
    })

    it('a renewed lease keeps its turns; a late end of an ended orphan changes nothing', async () => {
      const store = await make()
      await store.renewLease('main-a', 0)
      const id = await admitted(store, { execution: draft('message', 'main-a') })
      await store.renewLease('main-a', live)
      expect(await store.endOrphaned(lost)).toEqual([])
      await store.renewLease('main-a', 0)
      expect((await store.endOrphaned(lost)).map((each) => each.id)).toEqual([id])
      // The main was only cut off: its own end, when it comes, finds the turn ended.
      expect(await store.endExecution(ended(id))).toBeUndefined()
      await store.recordMessages(id, [message(id, 'assistant', 'late')])
      expect((await store.readThread(key()))?.messages).toEqual([])
      expect(await store.readExecution(id)).toMatchObject({ status: 'error', ...lost })
    })

    it('two mains sweeping at once end each orphan once', async () => {
      const store = await make()
      const ids = [
        await admitted(store, { thread: key('t1'), execution: draft('message', 'gone') }),
        await admitted(store, { thread: key('t2'), execution: draft('message', 'gone') }),
        await admitted(store, { thread: key('t3'), execution: draft('message', 'gone') }),
      ]
      const sweeps = await Promise.all([store.endOrphaned(lost), store.endOrphaned(lost)])
      const ended = sweeps.flat().map((each) => each.id)
      expect(ended.toSorted()).toEqual(ids.toSorted())
    })
  })
}
