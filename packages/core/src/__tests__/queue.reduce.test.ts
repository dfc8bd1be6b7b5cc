/**
 * The queue's reducer (`withQueue(reduce)`, issue 29), step by step: what each action does to the
 * queue's state, and the commands it returns, in order. The host is not here: storage is a string
 * the test hands in (`queue-attached`, `queue-stored`, `queue-locked`), the locks are actions.
 */
import { describe, expect, it } from 'vitest'
import type { Command, EngineAction, EngineState, StoredQueue } from '../engine/model'
import { initialEngineState, reduce, snapshotAction } from '../engine/reduce'
import { flushedQueue, parseStoredQueue, serializeQueue, withQueue } from '../engine/slices/queue'
import { replayTrace, traceRecorder } from '../engine/trace'
import { errorRecord } from '../wire/contract/errors'
import type { TurnEvent } from '../wire/contract/events'
import type { HistorySnapshot } from '../wire/contract/snapshot'
import { engineConfig, finishedTurn, key, runningTurn, snapshot, userMessage } from './harness'

const queued = withQueue(reduce)

function run(state: EngineState, ...actions: EngineAction[]) {
  const commands: Command[] = []
  for (const action of actions) {
    const step = queued(state, action, engineConfig)
    state = step.state
    commands.push(...step.commands)
  }
  return { state, commands }
}

/** What storage holds for `queue` (a server's own queue not known unless it says). */
const stored = (queue: Omit<StoredQueue, 'serverQueue'> & Partial<StoredQueue>) =>
  serializeQueue({ serverQueue: null, ...queue })
const item = (id: string, text = id, status: 'queued' | 'sending' | 'undelivered' = 'queued') => ({
  id,
  text,
  status,
})

const readOf = (record: HistorySnapshot, at = 1): EngineAction[] => [
  { type: 'read-started', at, fetch: at },
  snapshotAction(record, 'read', { at, stampedAt: at, random: 0 }),
]

/** Followed, the queue attached with what storage held, and a first read answered with `record`. */
function attached(raw: string | null, record: HistorySnapshot = snapshot([]), sender = true) {
  return run(
    initialEngineState({ key, tab: 'A' }),
    { type: 'activated', at: 0, pushConnected: true },
    { type: 'queue-attached', stored: raw, whenStopped: 'pause', at: 0 },
    ...(sender ? [{ type: 'queue-sender', held: true, stored: raw } as const] : []),
    ...readOf(record),
  )
}

const submit = (request: number, text: string, messageId = `m${request}`): EngineAction => ({
  type: 'submit-requested',
  request,
  text,
  messageId,
  at: 2,
})

/** Events of the stream of the queued message's POST (token -1). */
const queuedEvents = (...events: TurnEvent[]): EngineAction => ({
  type: 'turn-events',
  token: -1,
  events,
  at: 3,
  stampedAt: 3,
})

/** The sender posting its one queued message `text` (id `q1`, token -1), its mark committed. */
function postingOne(text: string) {
  const held = stored({ items: [item('q1', text)], paused: false, dedupes: null, serverQueue: null })
  const posting = run(
    attached(held).state,
    { type: 'queue-locked', stored: held },
    { type: 'queue-written' },
  ).state
  return { held, posting }
}

const shown = (state: EngineState) =>
  state.queue?.view.items.map((i) => `${i.text}:${i.status}`).join(',')

describe("the queue's reducer [R-QUEUE-CLIENT]", () => {
  it('a message sent while a turn runs is queued: settled as queued, the draft cleared, one write asked', () => {
    const busy = attached(null, runningTurn({ executionId: 'e1' })).state
    const typed = run(busy, { type: 'draft-changed', draft: 'later' }).state
    const { state, commands } = run(typed, submit(1, 'later'), submit(2, 'and this'))
    expect(shown(state)).toBe('later:queued,and this:queued')
    expect(state.draft).toBe('')
    expect(state.own).toBeNull()
    expect(commands.filter((c) => c.type === 'post')).toEqual([])
    expect(commands.filter((c) => c.type === 'settle-submit')).toEqual([
      { type: 'settle-submit', request: 1, result: { outcome: 'queued', id: 'm1' } },
      { type: 'settle-submit', request: 2, result: { outcome: 'queued', id: 'm2' } },
    ])
    // Shown at once, written once the write lock is held: one `queue-lock` for both changes.
    expect(commands.filter((c) => c.type === 'queue-lock')).toHaveLength(1)
    expect(state.queue?.pending).toHaveLength(2)
  })

  it("the write applies this tab's changes to what storage holds then: another tab's message is kept", () => {
    const busy = attached(null, runningTurn({ executionId: 'e1' })).state
    const mine = run(busy, submit(1, 'mine')).state
    const other = stored({ items: [item('o1', 'theirs')], paused: false, dedupes: null, serverQueue: null })
    const { state, commands } = run(mine, { type: 'queue-locked', stored: other })
    const write = commands.find((c) => c.type === 'queue-store')
    expect(write?.type === 'queue-store' && write.stored.items.map((i) => i.text)).toEqual([
      'theirs',
      'mine',
    ])
    expect(state.queue).toMatchObject({ pending: [], locking: false })
    expect(shown(state)).toBe('theirs:queued,mine:queued')
  })

  it('the sender chooses the head in the store’s transaction, marks it `sending` there, and POSTs it once that is committed', () => {
    const held = stored({
      items: [item('q1', 'first'), item('q2', 'second')],
      paused: false,
      dedupes: null,
    })
    const { state, commands } = attached(held)
    // Idle and the sender: it asks for the write lock; nothing is marked or posted yet.
    expect(shown(state)).toBe('first:queued,second:queued')
    expect(commands.filter((c) => c.type === 'post')).toEqual([])
    expect(commands.at(-1)).toEqual({ type: 'queue-lock' })
    // Marked in the transaction; posted only once that write is committed (`queue-written`).
    const inTransaction = run(state, { type: 'queue-locked', stored: held })
    expect(inTransaction.commands.some((c) => c.type === 'post')).toBe(false)
    const locked = run(state, { type: 'queue-locked', stored: held }, { type: 'queue-written' })
    const kinds = locked.commands.map((c) => c.type)
    expect(kinds.indexOf('queue-store')).toBeLessThan(kinds.indexOf('post'))
    const write = locked.commands.find((c) => c.type === 'queue-store')
    expect(write?.type === 'queue-store' && write.stored.items[0]).toMatchObject({
      id: 'q1',
      status: 'sending',
      by: 'A',
    })
    const post = locked.commands.find((c) => c.type === 'post')
    expect(post).toMatchObject({
      token: -1,
      request: { kind: 'message', body: { message: 'first', messageId: 'q1' } },
    })
    expect(locked.state.draft).toBe('')
  })

  it('a tab that is not the sender sends nothing', () => {
    const held = stored({ items: [item('q1')], paused: false, dedupes: null, serverQueue: null })
    const { state, commands } = attached(held, snapshot([]), false)
    expect(shown(state)).toBe('q1:queued')
    expect(commands.some((c) => c.type === 'post' || c.type === 'queue-lock')).toBe(false)
  })

  it("the queued message's fate: accepted, it leaves the queue; refused as busy, it waits again", () => {
    const { posting } = postingOne('first')
    const accepted = run(
      posting,
      queuedEvents({ type: 'execution-started', executionId: 'e1', sessionId: key.threadId }),
    ).state
    expect(shown(accepted)).toBe('')
    expect(accepted.queue?.sending).toBeNull()
    expect(accepted.live?.executionId).toBe('e1')

    const refused = run(
      posting,
      queuedEvents({ type: 'error', message: 'busy', errorCode: 'turn_already_running' }),
    ).state
    // It waits for a read to show what runs (never a POST per step while the thread is taken).
    expect(shown(refused)).toBe('first:queued')
    expect(refused.queue?.judgeAfterRead).toBe(refused.reads.count)
    expect(refused.reads.wanted).toBe(true)

    const failed = run(posting, {
      type: 'post-failed',
      token: -1,
      error: errorRecord('bad_request', 'The message is too long.'),
    }).state
    expect(shown(failed)).toBe('first:undelivered')
    expect(failed.queue?.view.items[0]?.error?.message).toBe('The message is too long.')
  })

  it('a queued POST leaves the draft alone: the person may be typing the next message', () => {
    const { posting } = postingOne('same text')
    const typing = run(posting, { type: 'draft-changed', draft: 'same text' }).state
    const accepted = run(
      typing,
      queuedEvents({ type: 'execution-started', executionId: 'e1', sessionId: key.threadId }),
    ).state
    expect(accepted.draft).toBe('same text')
  })

  it('a fresh record that holds a queued message’s id takes it out of the queue', () => {
    const held = stored({ items: [item('q1', 'first')], paused: false, dedupes: null, serverQueue: null })
    const watcher = attached(held, runningTurn({ executionId: 'e0' }), false).state
    const recorded = snapshot([{ ...userMessage('e2', 'first'), messageId: 'q1' }])
    const { state } = run(watcher, ...readOf(recorded, 5))
    expect(shown(state)).toBe('')
  })

  it.each([
    [true, 'first:queued', 'sent again with the same id'],
    [false, 'first:undelivered', 'undelivered, for the person to decide'],
  ])(
    "a message another tab was sending, judged by the next sender's read (dedupes %s): %s [R-QUEUE-CLIENT-ORPHAN]",
    (dedupes, after) => {
      const orphan = stored({
        items: [{ ...item('q1', 'first', 'sending'), by: 'gone' }],
        paused: false,
        dedupes,
      })
      const { state, commands } = run(
        initialEngineState({ key, tab: 'A' }),
        { type: 'activated', at: 0, pushConnected: true },
        { type: 'queue-attached', stored: orphan, whenStopped: 'pause', at: 0 },
        { type: 'read-started', at: 1, fetch: 1 },
        { type: 'queue-sender', held: true, stored: orphan },
        snapshotAction(snapshot([]), 'read', { at: 1, stampedAt: 1, random: 0 }),
      )
      // The read that answered was on its way before this tab found the message: it does not judge.
      expect(state.queue?.judgeAfterRead).toBe(1)
      expect(state.reads.wanted).toBe(true)
      expect(shown(state)).toBe('first:sending')
      expect(commands.some((c) => c.type === 'post')).toBe(false)
      const judged = run(state, ...readOf(snapshot(finishedTurn('e0', 'Q', 'A')), 5)).state
      expect(judged.queue?.judgeAfterRead).toBeNull()
      expect(shown(judged)).toBe(after)
      // Sent again (queued, the write lock asked for to send it); or left to the person.
      if (dedupes) expect(judged.queue?.locking).toBe(true)
      else expect(judged.queue?.view.items[0]?.error?.message).toMatch(/may have been sent/)
    },
  )

  it('Stop pauses the queue (pause), or puts it back into the draft (draft) [R-QUEUE-CLIENT-STOPPED]', () => {
    const base = attached(null, runningTurn({ executionId: 'e1' })).state
    const withTwo = run(base, submit(1, 'one'), submit(2, 'two')).state
    const stop: EngineAction = { type: 'stop-requested', request: 3, at: 3 }
    expect(run(withTwo, stop).state.queue?.view.paused).toBe(true)
    const drafting = {
      ...withTwo,
      queue: withTwo.queue && { ...withTwo.queue, whenStopped: 'draft' as const },
    }
    const back = run({ ...drafting, draft: 'typing' }, stop).state
    expect(shown(back)).toBe('')
    expect(back.draft).toBe('typing\n\none\n\ntwo')
  })

  it('the sender pauses on a turn the record shows cancelled, before it sends the next (Stop in another tab) [R-QUEUE-CLIENT-STOPPED]', () => {
    const held = stored({ items: [item('q1', 'next')], paused: false, dedupes: null, serverQueue: null })
    const { state } = attached(held, runningTurn({ executionId: 'e1' }))
    expect(state.watching).toEqual(['e1'])
    const cancelled = snapshot([
      { ...userMessage('e1', 'Q'), executionStatus: 'cancelled' },
      {
        ...userMessage('e1', 'Q'),
        id: 'e1:assistant',
        role: 'assistant',
        executionStatus: 'cancelled',
      },
    ])
    const { state: after, commands } = run(state, ...readOf(cancelled, 5))
    expect(commands).toContainEqual(
      expect.objectContaining({
        type: 'turn-ended',
        ending: expect.objectContaining({ status: 'cancelled' }),
      }),
    )
    expect(after.queue?.view.paused).toBe(true)
    const locked = run(after, { type: 'queue-locked', stored: held }, { type: 'queue-written' })
    expect(locked.commands.some((c) => c.type === 'post')).toBe(false)
  })

  it('the sender sends nothing while a turn it saw has no ending on record (its own stream ended first) [R-QUEUE-CLIENT-STOPPED]', () => {
    const two = stored({
      items: [item('q1', 'first'), item('q2', 'second')],
      paused: false,
      dedupes: null,
    })
    const posting = run(
      attached(two).state,
      { type: 'queue-locked', stored: two },
      { type: 'queue-written' },
    ).state
    const streamed = run(
      posting,
      queuedEvents({ type: 'execution-started', executionId: 'e1', sessionId: key.threadId }),
      queuedEvents({ type: 'done', executionId: 'e1' }),
      { type: 'stream-ended', token: -1, end: { kind: 'terminal' } },
    ).state
    expect(streamed.watching).toEqual(['e1'])
    const locked = run(
      streamed,
      { type: 'queue-locked', stored: streamed.queue && serializeQueue(streamed.queue.view) },
      { type: 'queue-written' },
    )
    expect(locked.commands.some((c) => c.type === 'post')).toBe(false)
  })

  it('edit, remove, reorder, send now and resume are changes shown at once [R-QUEUE-CLIENT-EDIT]', () => {
    const base = attached(null, runningTurn({ executionId: 'e1' })).state
    const four = run(base, submit(1, 'a'), submit(2, 'b'), submit(3, 'c'), submit(4, 'd')).state
    const { state } = run(
      four,
      { type: 'queue-edit', id: 'm1', text: 'a2' },
      { type: 'queue-remove', id: 'm2' },
      { type: 'queue-reorder', id: 'm4', to: 0 },
      { type: 'queue-send-now', id: 'm3' },
    )
    expect(shown(state)).toBe('c:queued,d:queued,a2:queued')
  })

  it('storage is parsed, never trusted [R-QUEUE-CLIENT-PARSED]', () => {
    expect(parseStoredQueue(null)).toEqual({ items: [], paused: false, dedupes: null, serverQueue: null })
    for (const junk of [
      '',
      '{',
      '[]',
      '{"v":"2","items":[],"paused":false,"dedupes":null}',
      42,
      {},
    ])
      expect(parseStoredQueue(junk)).toHaveProperty('problem')
    const twice = JSON.stringify({
      v: '1',
      items: [item('x'), item('x', 'again')],
      paused: false,
      dedupes: null,
    })
    expect(parseStoredQueue(twice)).toEqual({ items: [item('x')], paused: false, dedupes: null, serverQueue: null })
    const { state, commands } = attached('not json')
    expect(shown(state)).toBe('')
    expect(commands.find((c) => c.type === 'warn')).toMatchObject({
      message: expect.stringMatching(/stored message queue is not a queue/) as unknown,
    })
  })

  // What the queue model (`queue.model.test.ts`) found, each pinned here by the step it was.
  describe('found by the queue model', () => {
    it('a page that goes before its write lock is granted writes its changes at once (queue-flush)', () => {
      const busy = attached(null, runningTurn({ executionId: 'e1' })).state
      const typed = run(busy, submit(1, 'just before closing')).state
      const { commands } = run(typed, { type: 'disposed' })
      expect(commands.at(-1)).toEqual({ type: 'queue-flush', changes: typed.queue?.pending })
      // And on `pagehide` (the page may come back from the back-forward cache: the lock writes too).
      const left = run(typed, { type: 'queue-leaving' })
      expect(left.commands).toEqual([{ type: 'queue-flush', changes: typed.queue?.pending }])
      expect(left.state.queue?.pending).toEqual(typed.queue?.pending)
      expect(flushedQueue(null, typed.queue?.pending ?? []).items.map((i) => i.text)).toEqual([
        'just before closing',
      ])
    })

    it('the next message is chosen under the write lock, from storage: another tab’s earlier one goes first', () => {
      // This tab knows only its own message; storage has another tab's, written before it.
      const own = stored({ items: [item('mine')], paused: false, dedupes: null, serverQueue: null })
      const { state } = attached(own)
      const both = stored({ items: [item('theirs'), item('mine')], paused: false, dedupes: null, serverQueue: null })
      const locked = run(state, { type: 'queue-locked', stored: both }, { type: 'queue-written' })
      const post = locked.commands.find((c) => c.type === 'post')
      expect(post).toMatchObject({ request: { body: { messageId: 'theirs' } } })
      expect(shown(locked.state)).toBe('theirs:sending,mine:queued')
    })

    it('send now on a view that showed it queued never sends again one found undelivered since', () => {
      const busy = attached(null, runningTurn({ executionId: 'e1' })).state
      const queued = run(busy, submit(1, 'once')).state
      const undelivered = stored({
        items: [
          {
            ...item('m1', 'once', 'undelivered'),
            error: { code: 'timeout', message: 'No answer' },
          },
        ],
        paused: false,
        dedupes: false,
      })
      // The person pressed "send now" on what they saw queued; storage says undelivered by then.
      const pressed = run(queued, { type: 'queue-send-now', id: 'm1' }).state
      const written = run(pressed, { type: 'queue-locked', stored: undelivered }).state
      expect(shown(written)).toBe('once:undelivered')
      // Seen undelivered, "send now" is the person's decision to send it again.
      const seen = run(written, { type: 'queue-send-now', id: 'm1' }).state
      expect(shown(seen)).toBe('once:queued')
    })

    it('edit and remove of a message this tab shows sending change nothing', () => {
      const held = stored({
        items: [{ ...item('q1', 'on its way', 'sending'), by: 'B' }],
        paused: false,
        dedupes: null,
      })
      const { state } = attached(held, snapshot([]), false)
      const after = run(
        state,
        { type: 'queue-remove', id: 'q1' },
        { type: 'queue-edit', id: 'q1', text: 'x' },
      )
      expect(after.state.queue?.pending).toEqual([])
      expect(after.commands.some((c) => c.type === 'queue-lock')).toBe(false)
    })

    it('a new sender starts from what storage holds when it gets the lock', () => {
      const { state } = attached(null, snapshot([]), false)
      const now = stored({ items: [item('q1', 'written elsewhere')], paused: false, dedupes: null, serverQueue: null })
      const sender = run(state, { type: 'queue-sender', held: true, stored: now }).state
      expect(shown(sender)).toBe('written elsewhere:queued')
    })

    it('under the lock, a message another tab was sending is judged before anything is sent', () => {
      const quiet = stored({ items: [item('q1')], paused: false, dedupes: true, serverQueue: null })
      const { state } = attached(quiet)
      const orphan = stored({
        items: [{ ...item('q0', 'theirs', 'sending'), by: 'gone' }, item('q1')],
        paused: false,
        dedupes: true,
      })
      const locked = run(state, { type: 'queue-locked', stored: orphan })
      expect(locked.commands.some((c) => c.type === 'post')).toBe(false)
      expect(locked.state.queue?.judgeAfterRead).toBe(locked.state.reads.count)
    })

    it("an undelivered message's error is kept as plain JSON: storage reads it back", () => {
      const { held, posting } = postingOne('first')
      const failed = run(posting, {
        type: 'post-failed',
        token: -1,
        error: { ...errorRecord('bad_request', 'Too long.'), status: 400, issues: ['message'] },
      })
      const write = run(
        failed.state,
        { type: 'queue-locked', stored: held },
        { type: 'queue-written' },
      ).commands.find((c) => c.type === 'queue-store')
      const raw = write?.type === 'queue-store' ? serializeQueue(write.stored) : ''
      expect(parseStoredQueue(raw)).toMatchObject({
        items: [{ status: 'undelivered', error: { code: 'bad_request', message: 'Too long.' } }],
      })
    })
  })

  it('a run with a queue is data: its trace replays through JSON [R-ENGINE-TRACE]', () => {
    const initial = initialEngineState({ key, tab: 'A' })
    const recorder = traceRecorder(initial, engineConfig)
    let state = initial
    const held = stored({ items: [item('q1', 'first')], paused: false, dedupes: true, serverQueue: null })
    for (const action of [
      { type: 'activated', at: 0, pushConnected: true },
      { type: 'queue-attached', stored: held, whenStopped: 'pause', at: 0 },
      { type: 'queue-sender', held: true, stored: held },
      ...readOf(snapshot([])),
      { type: 'queue-locked', stored: held },
      { type: 'queue-written' },
    ] satisfies EngineAction[]) {
      const step = queued(state, action, engineConfig)
      recorder.onStep(action, step)
      state = step.state
    }
    const trace = JSON.parse(JSON.stringify(recorder.trace()))
    expect(replayTrace(trace, queued)).toBeNull()
    // The engine's own reducer takes no queue action: a queue's trace needs the queue's reducer.
    expect(() => replayTrace(trace)).toThrow()
  })
})
