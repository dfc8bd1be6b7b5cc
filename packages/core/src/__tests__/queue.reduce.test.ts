/**
 * The queue's reducer (`reducerWith([queuePart])`, issue 29), step by step: what each action does to the
 * queue's state, and the commands it returns, in order. The host is not here: storage is a string
 * the test hands in (`queue-attached`, `queue-stored`, `queue-locked`), the locks are actions.
 */
import { describe, expect, it } from 'vitest'
import type { Command, EngineAction, EngineState } from '../engine/model'
import { type ServerQueueView, type StoredQueue, type WhenStopped } from '../engine/queue/model'
import { queueOf } from '../engine/queue/state'
import { initialEngineState, reducerWith, snapshotAction } from '../engine/reduce'
import { queuePart } from '../engine/queue/reduce'
import { shownQueue } from '../engine/queue/server'
import { flushedQueue, isPaused, parseStoredQueue, serializeQueue } from '../engine/queue/stored'
import { queueFields } from '../engine/queue/view'
import { selectSessionState } from '../engine/select'
import { replayTrace, traceRecorder } from '../engine/trace'
import { errorRecord } from '../wire/contract/errors'
import type { TurnEvent } from '../wire/contract/events'
import type { HistorySnapshot } from '../wire/contract/snapshot'
import { engineConfig, finishedTurn, key, runningTurn, snapshot, userMessage } from './harness'

const queued = reducerWith([queuePart])

/** The actions through the reducer, in order, as the runner takes them: a step's `act` next. */
function run(state: EngineState, ...actions: EngineAction[]) {
  const commands: Command[] = []
  const todo = [...actions]
  for (let action = todo.shift(); action; action = todo.shift()) {
    const step = queued(state, action, engineConfig)
    state = step.state
    const acted: EngineAction[] = []
    for (const command of step.commands)
      if (command.type === 'act') acted.push(command.action)
      else commands.push(command)
    todo.unshift(...acted)
  }
  return { state, commands }
}

/** What storage holds for `queue` (a server's own queue not known unless it says). */
const stored = (queue: Omit<StoredQueue, 'serverQueue' | 'serverRev'> & Partial<StoredQueue>) =>
  serializeQueue({ serverQueue: null, serverRev: 0, ...queue })
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
function attached(
  raw: string | null,
  record: HistorySnapshot = snapshot([]),
  sender = true,
  whenStopped: WhenStopped = 'pause',
) {
  return run(
    initialEngineState({ key, tab: 'A' }),
    { type: 'activated', at: 0, pushConnected: true },
    { type: 'queue-attached', stored: raw, kept: true, whenStopped, at: 0 },
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
  const held = stored({
    items: [item('q1', text)],
    dedupes: null,
  })
  const posting = run(
    attached(held).state,
    { type: 'queue-locked', stored: held },
    { type: 'queue-written' },
  ).state
  return { held, posting }
}

/** The record once turn `executionId` was cancelled (a Stop, here or in another tab). */
const cancelledRecord = (executionId: string) =>
  snapshot([
    { ...userMessage(executionId, 'Q'), executionStatus: 'cancelled' },
    {
      ...userMessage(executionId, 'Q'),
      id: `${executionId}:assistant`,
      role: 'assistant',
      executionStatus: 'cancelled',
    },
  ])

const cancelledEnding = expect.objectContaining({
  type: 'turn-ended',
  ending: expect.objectContaining({ status: 'cancelled' }),
})

/** A pause holds some of its messages (`queuePaused`). */
const paused = (state: EngineState) =>
  queueOf(state) !== undefined && isPaused(queueOf(state)!.view)

const shown = (state: EngineState) =>
  queueOf(state)
    ?.view.items.map((i) => `${i.text}:${i.status}`)
    .join(',')

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
    expect(queueOf(state)?.pending).toHaveLength(2)
  })

  it("the write applies this tab's changes to what storage holds then: another tab's message is kept", () => {
    const busy = attached(null, runningTurn({ executionId: 'e1' })).state
    const mine = run(busy, submit(1, 'mine')).state
    const other = stored({
      items: [item('o1', 'theirs')],
      dedupes: null,
    })
    const { state, commands } = run(mine, { type: 'queue-locked', stored: other })
    const write = commands.find((c) => c.type === 'queue-store')
    expect(write?.type === 'queue-store' && write.stored.items.map((i) => i.text)).toEqual([
      'theirs',
      'mine',
    ])
    expect(queueOf(state)).toMatchObject({ pending: [], locking: false })
    expect(shown(state)).toBe('theirs:queued,mine:queued')
  })

  it('the sender chooses the head in the store’s transaction, marks it `sending` there, and POSTs it once that is committed', () => {
    const held = stored({
      items: [item('q1', 'first'), item('q2', 'second')],
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
    const held = stored({ items: [item('q1')], dedupes: null })
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
    expect(queueOf(accepted)?.sending).toBeNull()
    expect(accepted.live?.executionId).toBe('e1')

    const refused = run(
      posting,
      queuedEvents({ type: 'error', message: 'busy', errorCode: 'turn_already_running' }),
    ).state
    // It waits for a read to show what runs (never a POST per step while the thread is taken).
    expect(shown(refused)).toBe('first:queued')
    expect(queueOf(refused)?.judgeAfterRead).toBe(refused.reads.count)
    expect(refused.reads.wanted).toBe(true)

    const failed = run(posting, {
      type: 'post-failed',
      token: -1,
      error: errorRecord('bad_request', 'The message is too long.'),
    }).state
    expect(shown(failed)).toBe('first:undelivered')
    expect(queueOf(failed)?.view.items[0]?.error?.message).toBe('The message is too long.')
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
    const held = stored({
      items: [item('q1', 'first')],
      dedupes: null,
    })
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
        dedupes,
      })
      const { state, commands } = run(
        initialEngineState({ key, tab: 'A' }),
        { type: 'activated', at: 0, pushConnected: true },
        { type: 'queue-attached', stored: orphan, kept: true, whenStopped: 'pause', at: 0 },
        { type: 'read-started', at: 1, fetch: 1 },
        { type: 'queue-sender', held: true, stored: orphan },
        snapshotAction(snapshot([]), 'read', { at: 1, stampedAt: 1, random: 0 }),
      )
      // The read that answered was on its way before this tab found the message: it does not judge.
      expect(queueOf(state)?.judgeAfterRead).toBe(1)
      expect(state.reads.wanted).toBe(true)
      expect(shown(state)).toBe('first:sending')
      expect(commands.some((c) => c.type === 'post')).toBe(false)
      const judged = run(state, ...readOf(snapshot(finishedTurn('e0', 'Q', 'A')), 5)).state
      expect(queueOf(judged)?.judgeAfterRead).toBeNull()
      expect(shown(judged)).toBe(after)
      // Sent again (queued, the write lock asked for to send it); or left to the person.
      if (dedupes) expect(queueOf(judged)?.locking).toBe(true)
      else expect(queueOf(judged)?.view.items[0]?.error?.message).toMatch(/may have been sent/)
    },
  )

  it('Stop pauses the queue (pause), or puts it back into the draft (draft) [R-QUEUE-CLIENT-STOPPED]', () => {
    const base = attached(null, runningTurn({ executionId: 'e1' })).state
    const withTwo = run(base, submit(1, 'one'), submit(2, 'two')).state
    const stop: EngineAction = { type: 'stop-requested', request: 3, at: 3 }
    expect(paused(run(withTwo, stop).state)).toBe(true)
    const drafting = {
      ...withTwo,
      queue: queueOf(withTwo) && { ...queueOf(withTwo), whenStopped: 'draft' as const },
    }
    const back = run({ ...drafting, draft: 'typing' }, stop).state
    expect(shown(back)).toBe('')
    expect(back.draft).toBe('typing\n\none\n\ntwo')
  })

  it('Stop pauses what was queued when it was pressed [R-QUEUE-PAUSE-HOLDS-QUEUED]', () => {
    const base = attached(null, runningTurn({ executionId: 'e1' })).state
    const withOne = run(base, submit(1, 'before')).state
    const stopped = run(withOne, { type: 'stop-requested', request: 3, at: 3 }).state
    expect(queueOf(stopped)?.view.items.map((i) => `${i.text}:${i.held ?? false}`)).toEqual([
      'before:true',
    ])
    // Held across the thread's end: nothing is sent until the person resumes.
    const ended = run(stopped, ...readOf(cancelledRecord('e1'), 5)).state
    const locked = run(ended, { type: 'queue-locked', stored: null }, { type: 'queue-written' })
    expect(locked.commands.filter((c) => c.type === 'post')).toEqual([])
    expect(paused(locked.state)).toBe(true)
  })

  it('a message queued after a Stop is not held by it: it is sent once the answer ends, the held one waits [R-QUEUE-PAUSE-HOLDS-QUEUED]', () => {
    const base = attached(null, runningTurn({ executionId: 'e1' })).state
    // Nothing queued when Stop is pressed: nothing held, and the answer ends normally (too late).
    const stopped = run(base, { type: 'stop-requested', request: 3, at: 3 }).state
    expect(paused(stopped)).toBe(false)
    const later = run(stopped, submit(4, 'later')).state
    const ended = run(later, ...readOf(snapshot(finishedTurn('e1', 'Q', 'A')), 5)).state
    expect(paused(ended)).toBe(false)
    const locked = run(ended, { type: 'queue-locked', stored: null }, { type: 'queue-written' })
    expect(locked.commands.filter((c) => c.type === 'post')).toHaveLength(1)
    // One held by a Stop, one queued after it: the later one goes, the held one waits.
    const withOne = run(base, submit(1, 'before')).state
    const held = run(withOne, { type: 'stop-requested', request: 3, at: 3 }, submit(4, 'after'))
    const free = run(held.state, ...readOf(cancelledRecord('e1'), 5)).state
    const raw = queueOf(free) && serializeQueue(queueOf(free)!.view)
    const sent = run(free, { type: 'queue-locked', stored: raw }, { type: 'queue-written' })
    expect(sent.commands.filter((c) => c.type === 'post')).toEqual([
      expect.objectContaining({
        request: expect.objectContaining({ body: expect.objectContaining({ message: 'after' }) }),
      }),
    ])
    expect(shown(sent.state)).toBe('before:queued,after:sending')
    expect(paused(sent.state)).toBe(true)
  })

  it('queuePaused is false with nothing to resume: a Stop with nothing queued, the held ones removed [R-QUEUE-PAUSE-HOLDS-QUEUED]', () => {
    const base = attached(null, runningTurn({ executionId: 'e1' })).state
    const empty = run(base, { type: 'stop-requested', request: 3, at: 3 }).state
    expect(queueFields(queueOf(empty), undefined).queuePaused).toBe(false)
    const withOne = run(base, submit(1, 'one')).state
    const stopped = run(withOne, { type: 'stop-requested', request: 3, at: 3 }).state
    expect(queueFields(queueOf(stopped), undefined)).toMatchObject({
      queuePaused: true,
      queue: [{ text: 'one', status: 'queued', held: true }],
    })
    const removed = run(stopped, { type: 'queue-remove', id: 'm1' }).state
    expect(queueFields(queueOf(removed), undefined).queuePaused).toBe(false)
  })

  it('another tab hears the hold through the store; what it queues after is not held; a page of an earlier version reads it paused [R-QUEUE-PAUSE-HOLDS-QUEUED]', () => {
    const base = attached(null, runningTurn({ executionId: 'e1' })).state
    const stopped = run(base, submit(1, 'one'), { type: 'stop-requested', request: 3, at: 3 })
    const raw = queueOf(stopped.state) && serializeQueue(queueOf(stopped.state)!.view)
    expect(JSON.parse(raw ?? '{}')).toMatchObject({ paused: true })
    const other = attached(null, runningTurn({ executionId: 'e1' }), false).state
    const heard = run(other, { type: 'queue-stored', stored: raw }, submit(7, 'two')).state
    expect(queueOf(heard)?.view.items.map((i) => `${i.text}:${i.held ?? false}`)).toEqual([
      'one:true',
      'two:false',
    ])
    // An earlier version wrote `paused: true` and no holds: every waiting message is held.
    const legacy = parseStoredQueue(
      stored({ items: [item('a')], dedupes: null }).replace('"paused":false', '"paused":true'),
    )
    expect('items' in legacy && legacy.items[0]?.held).toBe(true)
  })

  it('the sender pauses on a turn the record shows cancelled, before it sends the next (Stop in another tab) [R-QUEUE-CLIENT-STOPPED]', () => {
    const held = stored({
      items: [item('q1', 'next')],
      dedupes: null,
    })
    const { state } = attached(held, runningTurn({ executionId: 'e1' }))
    expect(state.watching).toEqual(['e1'])
    const { state: after, commands } = run(state, ...readOf(cancelledRecord('e1'), 5))
    expect(commands).toContainEqual(cancelledEnding)
    expect(paused(after)).toBe(true)
    const locked = run(after, { type: 'queue-locked', stored: held }, { type: 'queue-written' })
    expect(locked.commands.some((c) => c.type === 'post')).toBe(false)
  })

  it('a resume pressed before the stopped turn’s cancelled ending reached the sender stands (found by the README test, issue 35) [R-QUEUE-CLIENT-STOPPED]', () => {
    const held = stored({ items: [item('q1', 'next')], dedupes: null })
    const { state } = attached(held, runningTurn({ executionId: 'e1' }))
    const stopped = run(state, { type: 'stop-requested', request: 3, at: 3 }).state
    expect(paused(stopped)).toBe(true)
    expect(queueOf(stopped)?.view.stopped).toEqual(['e1'])
    const resumed = run(stopped, { type: 'queue-resume' }).state
    expect(paused(resumed)).toBe(false)
    const { state: after, commands } = run(resumed, ...readOf(cancelledRecord('e1'), 5))
    expect(commands).toContainEqual(cancelledEnding)
    // The Stop paused the queue once; its ending does not undo the person's resume.
    expect(paused(after)).toBe(false)
    const locked = run(after, { type: 'queue-locked', stored: held }, { type: 'queue-written' })
    expect(locked.commands.filter((c) => c.type === 'post')).toHaveLength(1)
  })

  it('the sender sends nothing while a turn it saw has no ending on record (its own stream ended first) [R-QUEUE-CLIENT-STOPPED]', () => {
    const two = stored({
      items: [item('q1', 'first'), item('q2', 'second')],
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
      { type: 'queue-locked', stored: serializeQueue(queueOf(streamed)!.view) },
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
    expect(parseStoredQueue(null)).toEqual({
      items: [],
      dedupes: null,
      serverQueue: null,
      serverRev: 0,
    })
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
    expect(parseStoredQueue(twice)).toEqual({
      items: [item('x')],
      dedupes: null,
      serverQueue: null,
      serverRev: 0,
    })
    const { state, commands } = attached('not json')
    expect(shown(state)).toBe('')
    expect(commands.find((c) => c.type === 'warn')).toMatchObject({
      message: expect.stringMatching(/stored message queue is not a queue/) as unknown,
    })
  })

  it('a store transaction that fails loses nothing: its changes wait again, a message it marked is sent from memory, and the write is tried again at its time [R-QUEUE-CLIENT-DURABLE R-QUEUE-WRITE-RETRY]', () => {
    const busy = attached(null, runningTurn({ executionId: 'e1' })).state
    const typed = run(busy, submit(1, 'kept')).state
    const locked = run(typed, { type: 'queue-locked', stored: null }).state
    expect(queueOf(locked)?.pending).toEqual([])
    const failed = run(locked, {
      type: 'queue-store-failed',
      error: errorRecord('unsupported', 'QuotaExceededError'),
    })
    expect(queueOf(failed.state)).toMatchObject({ locking: false, writing: null, sending: null })
    expect(queueOf(failed.state)?.pending).toEqual(queueOf(typed)?.pending)
    expect(shown(failed.state)).toBe('kept:queued')
    const retryAt = queueOf(failed.state)?.unwritten?.retryAt ?? -1
    // The retry's time is the part's own due time, which the engine's alarm is set for.
    expect(failed.commands).toEqual([
      { type: 'warn', message: expect.any(String) },
      { type: 'set-alarm', at: retryAt },
    ])
    expect(queuePart.dueAt?.(failed.state, engineConfig)).toBe(retryAt)
    // Not at every next step (the person typing), but when its time comes.
    const next = run(failed.state, { type: 'draft-changed', draft: 'x' })
    expect(next.commands).not.toContainEqual({ type: 'queue-lock' })
    const early = run(next.state, { type: 'tick', at: retryAt - 1 })
    expect(early.commands).not.toContainEqual({ type: 'queue-lock' })
    const due = run(early.state, { type: 'tick', at: retryAt })
    expect(due.commands).toContainEqual({ type: 'queue-lock' })
    // Refused again: said once, tried later still; taken: written, kept again.
    const again = run(run(due.state, { type: 'queue-locked', stored: null }).state, {
      type: 'queue-store-failed',
      error: errorRecord('unsupported', 'QuotaExceededError'),
    })
    expect(again.commands.some((c) => c.type === 'warn')).toBe(false)
    expect(queueOf(again.state)?.unwritten?.retryAt).toBeGreaterThan(retryAt)
    // A message marked `sending` in a write that failed goes all the same, from memory: its mark
    // waits among the changes to write.
    const held = stored({ items: [item('q1', 'first')], dedupes: null })
    const marking = run(attached(held).state, { type: 'queue-locked', stored: held }).state
    expect(queueOf(marking)?.sending).toMatchObject({ id: 'q1', posted: false })
    const sent = run(marking, {
      type: 'queue-store-failed',
      error: errorRecord('unsupported', 'refused'),
    })
    expect(queueOf(sent.state)?.sending).toMatchObject({ id: 'q1', posted: true })
    expect(queueOf(sent.state)?.pending).toContainEqual(
      expect.objectContaining({ op: 'mark', id: 'q1', status: 'sending' }),
    )
    expect(sent.commands.some((c) => c.type === 'post')).toBe(true)
  })

  it('a change of a message another tab is sending already is refused, visibly, in the tab that made it [R-QUEUE-ON-ITS-WAY-REFUSED]', () => {
    // This tab (not the sender) shows q1 queued; another tab marked it `sending` meanwhile.
    const held = stored({ items: [item('q1', 'first')], dedupes: null })
    const seen = attached(held, snapshot([]), false).state
    const marked = stored({
      items: [{ ...item('q1', 'first', 'sending'), by: 'B' }],
      dedupes: null,
    })
    for (const action of [
      { type: 'queue-remove', id: 'q1' },
      { type: 'queue-edit', id: 'q1', text: 'first, edited' },
    ] as const) {
      const changed = run(seen, action).state
      const written = run(changed, { type: 'queue-locked', stored: marked }).state
      // The list shows it on its way, as it was; the tab says its change was refused.
      expect(shown(written)).toBe('first:sending')
      expect(written.error).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('already being sent') as unknown,
      })
      // And where this tab had heard of it: refused at once, said the same way.
      const heard = run(seen, { type: 'queue-stored', stored: marked }).state
      const refused = run(heard, action).state
      expect(shown(refused)).toBe('first:sending')
      expect(refused.error).toMatchObject({ code: 'conflict' })
    }
  })

  // What the queue model (`queue.model.test.ts`) found, each pinned here by the step it was.
  describe('found by the queue model', () => {
    it('a page that goes before its write lock is granted writes its changes at once (queue-flush)', () => {
      const busy = attached(null, runningTurn({ executionId: 'e1' })).state
      const typed = run(busy, submit(1, 'just before closing')).state
      const { commands } = run(typed, { type: 'disposed' })
      expect(commands.slice(-2)).toEqual([
        { type: 'queue-flush', changes: queueOf(typed)?.pending },
        { type: 'queue-close' },
      ])
      // And on `pagehide` (the page may come back from the back-forward cache: the lock writes too).
      const left = run(typed, { type: 'queue-leaving' })
      expect(left.commands).toEqual([{ type: 'queue-flush', changes: queueOf(typed)?.pending }])
      expect(queueOf(left.state)?.pending).toEqual(queueOf(typed)?.pending)
      expect(flushedQueue(null, queueOf(typed)?.pending ?? []).items.map((i) => i.text)).toEqual([
        'just before closing',
      ])
    })

    it('the next message is chosen under the write lock, from storage: another tab’s earlier one goes first', () => {
      // This tab knows only its own message; storage has another tab's, written before it.
      const own = stored({ items: [item('mine')], dedupes: null })
      const { state } = attached(own)
      const both = stored({
        items: [item('theirs'), item('mine')],
        dedupes: null,
      })
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
        dedupes: null,
      })
      const { state } = attached(held, snapshot([]), false)
      const after = run(
        state,
        { type: 'queue-remove', id: 'q1' },
        { type: 'queue-edit', id: 'q1', text: 'x' },
      )
      expect(queueOf(after.state)?.pending).toEqual([])
      expect(after.commands.some((c) => c.type === 'queue-lock')).toBe(false)
    })

    it('a new sender starts from what storage holds when it gets the lock', () => {
      const { state } = attached(null, snapshot([]), false)
      const now = stored({
        items: [item('q1', 'written elsewhere')],
        dedupes: null,
      })
      const sender = run(state, { type: 'queue-sender', held: true, stored: now }).state
      expect(shown(sender)).toBe('written elsewhere:queued')
    })

    it('under the lock, a message another tab was sending is judged before anything is sent', () => {
      const quiet = stored({ items: [item('q1')], dedupes: true })
      const { state } = attached(quiet)
      const orphan = stored({
        items: [{ ...item('q0', 'theirs', 'sending'), by: 'gone' }, item('q1')],
        dedupes: true,
      })
      const locked = run(state, { type: 'queue-locked', stored: orphan })
      expect(locked.commands.some((c) => c.type === 'post')).toBe(false)
      expect(queueOf(locked.state)?.judgeAfterRead).toBe(locked.state.reads.count)
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
    const held = stored({
      items: [item('q1', 'first')],
      dedupes: true,
    })
    for (const action of [
      { type: 'activated', at: 0, pushConnected: true },
      { type: 'queue-attached', stored: held, kept: true, whenStopped: 'pause', at: 0 },
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
    // Without the queue's part it is another run: it diverges, or its queue actions are refused.
    let other: boolean
    try {
      other = replayTrace(trace) !== null
    } catch {
      other = true
    }
    expect(other).toBe(true)
  })
})

describe("the server's own queue, in the queue's reducer [R-QUEUE-SERVER-HANDOVER]", () => {
  const onServer = (...items: ReturnType<typeof item>[]) =>
    stored({ items, dedupes: true, serverQueue: true })
  /** The sender, `keep`, on a server known to queue, while `e1` runs; `raw` is what storage holds. */
  const read = (seq: number, ...items: [string, string][]): EngineAction => ({
    type: 'queue-server-read',
    seq,
    server: {
      steerable: 'e1',
      items: items.map(([queueId, text]) => ({ queueId, text, steering: false })),
    } satisfies ServerQueueView,
  })
  /** With the reads of the server's queue it asked answered (empty: as the server's is). */
  const busyKeeping = (raw: string) => {
    let state = attached(raw, runningTurn({ executionId: 'e1' }), true, 'keep').state
    while (queueOf(state)?.serverReads.inFlight)
      state = run(state, read(queueOf(state)!.serverReads.asked)).state
    return state
  }
  /** A read of the server's queue is asked now, or wanted once the one in flight answers. */
  const readAsked = (before: EngineState, after: EngineState) =>
    queueOf(after)!.serverReads.asked > queueOf(before)!.serverReads.asked ||
    (queueOf(after)!.serverReads.wanted && !queueOf(before)!.serverReads.wanted)
  /** The sender, `keep`, while `e1` runs, its one message `text` handed over (not answered yet). */
  const handingOver = (text: string) => {
    const held = onServer(item('q1', text))
    const marked = [{ type: 'queue-locked', stored: held }, { type: 'queue-written' }] as const
    return run(busyKeeping(held), ...marked).state
  }
  /** The server's queue changed (its push), and the read that asks answered with `items`. */
  const pushedThenRead = (state: EngineState, ...items: [string, string][]) => {
    const asked = run(state, { type: 'queue-server-changed', thread: key }).state
    return run(asked, read(queueOf(asked)!.serverReads.asked, ...items)).state
  }
  const texts = (state: EngineState) =>
    (queueOf(state) ? shownQueue(queueOf(state)!) : [])
      .map((i) => `${i.text}:${i.status}`)
      .join(',')

  it('while a turn runs, the sender hands the head to the server (queue-post, not a turn of its own), then the next', () => {
    const held = onServer(item('q1', 'first'), item('q2', 'second'))
    const busy = busyKeeping(held)
    const sent = run(busy, { type: 'queue-locked', stored: held }, { type: 'queue-written' })
    expect(sent.commands.filter((c) => c.type === 'post')).toEqual([])
    expect(sent.commands.filter((c) => c.type === 'queue-post')).toEqual([
      { type: 'queue-post', token: -1, id: 'q1', text: 'first' },
    ])
    expect(queueOf(sent.state)?.sending).toMatchObject({ id: 'q1', via: 'server-queue' })
    // Taken into the server's queue: the server's now, read; the next one is sent in turn.
    const taken = run(sent.state, {
      type: 'queue-posted',
      token: -1,
      heard: { event: { type: 'message-queued', queueId: '5', sessionId: key.threadId } },
    })
    expect(queueOf(sent.state)?.sending).not.toBeNull()
    expect(queueOf(taken.state)?.sending).toBeNull()
    expect(queueOf(taken.state)?.view.items[0]).toEqual({
      id: 'q1',
      text: 'first',
      status: 'queued',
      queueId: '5',
    })
    expect(readAsked(sent.state, taken.state)).toBe(true)
    expect(taken.commands).toContainEqual({ type: 'queue-lock' })
    expect(texts(taken.state)).toBe('first:queued,second:queued')
  })

  it("with 'pause', or while the thread is free, nothing is handed over: the thread's turn carries it", () => {
    const held = onServer(item('q1', 'first'))
    const paused = attached(held, runningTurn({ executionId: 'e1' }), true, 'pause')
    expect(paused.commands.filter((c) => c.type === 'queue-lock')).toEqual([])
    const free = attached(held, snapshot([]), true, 'keep').state
    const sent = run(free, { type: 'queue-locked', stored: held }, { type: 'queue-written' })
    expect(sent.commands.filter((c) => c.type === 'queue-post')).toEqual([])
    expect(sent.commands.filter((c) => c.type === 'post')).toHaveLength(1)
  })

  it('no answer to a hand-over: sent once more with the same id where the server dedupes, then undelivered', () => {
    const sent = handingOver('first')
    const lost = {
      type: 'queue-posted',
      token: -1,
      heard: { cut: errorRecord('network_error', 'cut') },
    } as const
    const again = run(sent, lost)
    expect(again.commands).toContainEqual({
      type: 'queue-post',
      token: -1,
      id: 'q1',
      text: 'first',
    })
    const twice = run(again.state, lost)
    expect(twice.commands.filter((c) => c.type === 'queue-post')).toEqual([])
    expect(queueOf(twice.state)?.view.items[0]).toMatchObject({
      status: 'undelivered',
      error: { message: expect.stringMatching(/may have been taken/) },
    })
  })

  it('a message the server queued on a POST of this tab’s own turn leaves the queue as its turn begins there (found by the queue model: it showed queued and in the transcript)', () => {
    const held = onServer(item('q1', 'first'))
    // The thread looked free: sent as this tab's turn; the server was busy after all.
    const free = attached(held, snapshot([]), true, 'keep').state
    const sent = run(free, { type: 'queue-locked', stored: held }, { type: 'queue-written' }).state
    const queued = run(
      sent,
      queuedEvents({ type: 'message-queued', queueId: '9', sessionId: key.threadId }),
    ).state
    expect(queueOf(queued)?.view.items).toEqual([
      { id: 'q1', text: 'first', status: 'queued', queueId: '9' },
    ])
    const began = run(
      queued,
      queuedEvents({ type: 'execution-started', executionId: 'e9', sessionId: key.threadId }),
    ).state
    expect(queueOf(began)?.view.items).toEqual([])
    const users = selectSessionState(began).messages.filter((m) => m.role === 'user')
    expect(users.map((m) => m.content)).toEqual([[{ type: 'text', text: 'first' }]])
  })

  it('a bare done (taken by an earlier POST) or a turn begun at once: it leaves the queue, and the record is read', () => {
    const words: TurnEvent[] = [
      { type: 'done' },
      { type: 'execution-started', executionId: 'e9', sessionId: key.threadId },
    ]
    for (const event of words) {
      const sent = handingOver('first')
      const { state } = run(sent, { type: 'queue-posted', token: -1, heard: { event } })
      expect(queueOf(state)?.view.items).toEqual([])
      expect(state.reads.wanted || state.reads.inFlight).toBe(true)
    }
  })

  it('shows one queue: the server’s items in its order (under the ids this scope gave them), then what the client holds', () => {
    const held = onServer(
      { ...item('q1', 'mine'), queueId: '5' } as ReturnType<typeof item>,
      item('q2', 'local'),
    )
    let state = attached(held, runningTurn({ executionId: 'e1' }), true, 'keep').state
    while (queueOf(state)?.serverReads.inFlight)
      state = run(
        state,
        read(queueOf(state)!.serverReads.asked, ['4', 'another device'], ['5', 'mine']),
      ).state
    expect(shownQueue(queueOf(state)!).map((i) => [i.id, i.text, i.status, i.queueId])).toEqual([
      ['queue:4', 'another device', 'queued', '4'],
      ['q1', 'mine', 'queued', '5'],
      ['q2', 'local', 'queued', undefined],
    ])
  })

  it('a message on its way is shown once when a read of the server’s queue lists it before its POST’s answer (found by the e2e)', () => {
    const held = onServer({ ...item('q1', 'on its way', 'sending'), by: 'B' } as ReturnType<
      typeof item
    >)
    // Tab B sends it (this tab is not the sender: B's POST is on its way).
    let state = attached(held, runningTurn({ executionId: 'e1' }), false, 'keep').state
    while (queueOf(state)?.serverReads.inFlight)
      state = run(
        state,
        read(queueOf(state)!.serverReads.asked, ['4', 'another device'], ['5', 'on its way']),
      ).state
    expect(texts(state)).toBe('another device:queued,on its way:sending')
  })

  it('a read of the server’s queue that answers late changes nothing [R-QUEUE-SERVER-LATE]', () => {
    const newer = pushedThenRead(busyKeeping(onServer()), ['6', 'after the edit'])
    const { applied } = queueOf(newer)!.serverReads
    const late = run(newer, read(applied - 1, ['6', 'before the edit'], ['7', 'removed since']))
    expect(texts(late.state)).toBe('after the edit:queued')
    expect(queueOf(late.state)?.server).toBe(queueOf(newer)?.server)
  })

  it('a message handed over leaves the queue only when a read asked after this tab learnt of it does not list it', () => {
    const held = onServer({ ...item('q1', 'mine'), queueId: '5' } as ReturnType<typeof item>)
    const before = attached(held, runningTurn({ executionId: 'e1' }), true, 'keep').state
    const { asked } = queueOf(before)!.serverReads
    // As if this tab learnt of it after the read in flight was asked: that read may predate it.
    const learntLate = { ...before, queue: { ...queueOf(before)!, handedAt: { '5': asked } } }
    const kept = run(learntLate, read(asked, ['9', 'other'])).state
    expect(queueOf(kept)?.view.items.map((i) => i.id)).toEqual(['q1'])
    const again = run(kept, { type: 'queue-server-changed', thread: key }).state
    const gone = run(again, read(queueOf(again)!.serverReads.asked, ['9', 'other'])).state
    expect(queueOf(gone)?.view.items).toEqual([])
  })

  it('an item the server holds is changed through its routes; a 409 says why, and the queue is read again [R-QUEUE-SERVER-ITEMS]', () => {
    const busy = pushedThenRead(busyKeeping(onServer()), ['4', 'a'], ['5', 'b'], ['6', 'c'])
    const call = (action: EngineAction) =>
      run(busy, action).commands.filter((c) => c.type === 'queue-call')
    expect(call({ type: 'queue-edit', id: 'queue:5', text: 'b2' })).toEqual([
      { type: 'queue-call', call: { op: 'edit', queueId: '5', text: 'b2' } },
    ])
    expect(call({ type: 'queue-remove', id: 'queue:4' })).toEqual([
      { type: 'queue-call', call: { op: 'remove', queueId: '4' } },
    ])
    expect(call({ type: 'queue-reorder', id: 'queue:6', to: 0 })).toEqual([
      {
        type: 'queue-call',
        call: {
          op: 'reorder',
          queueId: '6',
          targetQueueId: '4',
          expectedQueueIds: ['4', '5', '6'],
        },
      },
    ])
    expect(texts(run(busy, { type: 'queue-reorder', id: 'queue:6', to: 0 }).state)).toBe(
      'c:queued,a:queued,b:queued',
    )
    expect(call({ type: 'queue-send-now', id: 'queue:5' })).toEqual([
      { type: 'queue-call', call: { op: 'steer', queueId: '5', executionId: 'e1' } },
    ])
    const refused = run(busy, {
      type: 'queue-called',
      call: { op: 'edit', queueId: '5', text: 'b2' },
      error: errorRecord('conflict', 'HTTP 409', { status: 409, serverCode: 'queue_item_started' }),
      conflict: 'queue_item_started',
    })
    expect(refused.state.error).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/already been taken up/),
    })
    expect(readAsked(busy, refused.state)).toBe(true)
    // A change made is told to the other tabs through the store.
    const made = run(busy, {
      type: 'queue-called',
      call: { op: 'remove', queueId: '4' },
      error: null,
      conflict: null,
    })
    expect(queueOf(made.state)?.view.serverRev).toBe(1)
  })
})
