/**
 * The queue's rules as tables, one per file of `engine/queue/` (issue 35): given an input, when
 * the function or the action, then this outcome. `queue.reduce.test.ts` holds the scenarios.
 */
import { describe, expect, it } from 'vitest'
import type { Command, EngineAction, EngineState, StepEvent } from '../engine/model'
import {
  type QueueChange,
  type QueuePostHeard,
  type QueueState,
  type StoredQueue,
} from '../engine/queue/model'
import { queueOf as queueState, type QueuedState } from '../engine/queue/state'
import { initialEngineState, reducerWith, snapshotAction } from '../engine/reduce'
import { applyQueueChange } from '../engine/queue/changes'
import { handOverAnswer } from '../engine/queue/handOver'
import { queuePart } from '../engine/queue/reduce'
import { readyToSend } from '../engine/queue/send'
import { afterStop } from '../engine/queue/stopped'
import {
  emptyQueue,
  isPaused,
  parseStoredQueue,
  serializeQueue,
  storedValue,
} from '../engine/queue/stored'
import { queueFields, queueGate } from '../engine/queue/view'
import { selectSessionState } from '../engine/select'
import { errorRecord } from '../wire/contract/errors'
import { engineConfig, finishedTurn, key, runningTurn, snapshot } from './harness'

const reducer = reducerWith([queuePart])

function run(state: EngineState, ...actions: EngineAction[]) {
  const commands: Command[] = []
  for (const action of actions) {
    const step = reducer(state, action, engineConfig)
    state = step.state
    commands.push(...step.commands)
  }
  return { state, commands }
}

const item = (id: string, status: 'queued' | 'sending' | 'undelivered' = 'queued') => ({
  id,
  text: id,
  status,
})
const queueOf = (...items: ReturnType<typeof item>[]): StoredQueue => ({ ...emptyQueue, items })
const ids = (queue: StoredQueue) => queue.items.map((i) => `${i.id}:${i.status}`).join(',')

const readOf = (record = snapshot([]), at = 1): EngineAction[] => [
  { type: 'read-started', at, fetch: at },
  snapshotAction(record, 'read', { at, stampedAt: at, random: 0 }),
]

/** Listened to, the store read (`stored`), the sender lock held, a first read answered. */
function ready(stored: StoredQueue | null = null, record = snapshot([])) {
  const raw = stored && serializeQueue(stored)
  return run(
    initialEngineState({ key, tab: 'A' }),
    { type: 'activated', at: 0, pushConnected: true },
    { type: 'queue-attached', stored: raw, kept: true, whenStopped: 'pause', at: 0 },
    { type: 'queue-sender', held: true, stored: raw },
    ...readOf(record),
  ).state
}

describe('stored.ts: what the store holds is parsed, never trusted [R-QUEUE-CLIENT-PARSED]', () => {
  it.each<[string, unknown, string]>([
    ['nothing stored', null, ''],
    ['a queue', serializeQueue(queueOf(item('a'), item('b', 'sending'))), 'a:queued,b:sending'],
    ['the same id twice: kept once', serializeQueue(queueOf(item('a'), item('a'))), 'a:queued'],
    ['not JSON', '{', 'problem'],
    ['another version', JSON.stringify({ ...emptyQueue, v: '9' }), 'problem'],
    [
      'an unknown status',
      JSON.stringify({ ...queueOf(), v: '1', items: [{ id: 'a', text: 'a', status: 'lost' }] }),
      'problem',
    ],
    ['not a string', { items: [] }, 'problem'],
  ])('%s', (_, raw, expected) => {
    const parsed = parseStoredQueue(raw)
    expect('problem' in parsed ? 'problem' : ids(parsed)).toBe(expected)
  })

  it.each<[string, StoredQueue, 'removed' | 'written']>([
    ['empty: the key is removed', emptyQueue, 'removed'],
    [
      'a Stop remembered, nothing queued: written [R-QUEUE-PAUSE-HOLDS-QUEUED]',
      { ...emptyQueue, stopped: ['e1'] },
      'written',
    ],
    ['a message: written', queueOf(item('a')), 'written'],
  ])('what the store is given: %s', (_, queue, expected) => {
    expect(storedValue(queue) === null ? 'removed' : 'written').toBe(expected)
  })
})

describe('changes.ts: each change, applied to what the store holds [R-QUEUE-CLIENT-EDIT]', () => {
  const two = queueOf(item('a'), item('b'))
  const sending = queueOf(item('a', 'sending'), item('b'))
  it.each<[string, StoredQueue, QueueChange, string]>([
    ['add', two, { op: 'add', item: item('c') }, 'a:queued,b:queued,c:queued'],
    ['add of an id held: nothing', two, { op: 'add', item: item('a') }, 'a:queued,b:queued'],
    ['remove', two, { op: 'remove', id: 'a' }, 'b:queued'],
    ['remove of one being sent: nothing', sending, { op: 'remove', id: 'a' }, 'a:sending,b:queued'],
    ['done of one being sent', sending, { op: 'done', id: 'a' }, 'b:queued'],
    ['move before another', two, { op: 'move', id: 'b', before: 'a' }, 'b:queued,a:queued'],
    ['move to the end', two, { op: 'move', id: 'a', before: null }, 'b:queued,a:queued'],
    ['front', two, { op: 'front', id: 'b' }, 'b:queued,a:queued'],
    [
      'a change of a message gone: nothing',
      two,
      { op: 'edit', id: 'x', text: 'y' },
      'a:queued,b:queued',
    ],
    ['mark', two, { op: 'mark', id: 'a', status: 'undelivered' }, 'a:undelivered,b:queued'],
  ])('%s', (_, queue, change, expected) => {
    expect(ids(applyQueueChange(queue, change))).toBe(expected)
  })

  it.each<[string, readonly string[] | undefined, string, readonly string[]]>([
    ['a first Stop', undefined, 'e1', ['e1']],
    ['the same one again: kept once', ['e1'], 'e1', ['e1']],
    [
      'the last eight only',
      ['1', '2', '3', '4', '5', '6', '7', '8'],
      '9',
      ['2', '3', '4', '5', '6', '7', '8', '9'],
    ],
  ])('stopped: %s [R-QUEUE-CLIENT-STOPPED]', (_, stopped, executionId, expected) => {
    const queue = { ...emptyQueue, ...(stopped && { stopped }) }
    expect(applyQueueChange(queue, { op: 'stopped', executionId }).stopped).toEqual(expected)
  })
})

describe("handOver.ts: a hand-over's first word, read once [R-QUEUE-SERVER-HANDOVER]", () => {
  const sid = key.threadId
  it.each<[string, QueuePostHeard, string]>([
    [
      'message-queued: the server holds it',
      { event: { type: 'message-queued', queueId: '7', sessionId: sid } },
      'queued 7',
    ],
    ['a bare done: taken by an earlier POST', { event: { type: 'done' } }, 'duplicate'],
    [
      'execution-started: taken up at once',
      { event: { type: 'execution-started', executionId: 'e2', sessionId: sid } },
      'started',
    ],
    [
      'an in-band error: refused',
      { event: { type: 'error', message: 'busy', errorCode: 'turn_already_running' } },
      'refused turn_already_running',
    ],
    [
      'cut before a word: may have been taken',
      { cut: errorRecord('stream_cut', 'cut') },
      'lost stream_cut',
    ],
    [
      'no answer (network): may have been taken',
      { failed: errorRecord('network_error', 'offline') },
      'lost network_error',
    ],
    [
      'a 502: may have been taken',
      { failed: errorRecord('server_error', 'bad gateway') },
      'lost server_error',
    ],
    ['a 403: refused for sure', { failed: errorRecord('forbidden', 'no') }, 'refused forbidden'],
  ])('%s', (_, heard, expected) => {
    const answer = handOverAnswer(heard)
    const detail =
      answer.kind === 'queued' ? answer.queueId : 'error' in answer ? answer.error.code : ''
    expect(`${answer.kind} ${detail}`.trim()).toBe(expected)
  })
})

describe('send.ts: the sender sends only when it may [R-QUEUE-CLIENT-READ-FIRST]', () => {
  const one = queueOf(item('a'))
  const withQueue = (state: EngineState, patch: Partial<QueueState>): QueuedState => {
    const queue = queueState(state)
    return { ...state, queue: queue && { ...queue, ...patch } }
  }
  it.each<[string, (state: EngineState) => EngineState, boolean]>([
    ['the sender, its store and the record read, the thread free', (s) => s, true],
    ['before its store answered', (s) => withQueue(s, { attached: false }), false],
    ['not the sender', (s) => withQueue(s, { sender: false }), false],
    [
      'before a read of the record answered (a reload mid-turn)',
      (s) => withQueue(s, { recordRead: false }),
      false,
    ],
    [
      'while a message of its own is on its way',
      (s) => withQueue(s, { sending: { id: 'a', token: -1, posted: true } }),
      false,
    ],
    [
      'while waiting to judge another tab’s message',
      (s) => withQueue(s, { judgeAfterRead: 1 }),
      false,
    ],
    ['not listened to', (s) => ({ ...s, active: false }), false],
  ])('%s', (_, change, expected) => {
    const state = change(ready(one))
    const queue = queueState(state)
    expect(queue && readyToSend(state, queue)).toBe(expected)
  })

  it('while a turn runs: not ready', () => {
    const busy = ready(one, runningTurn({ executionId: 'e1' }))
    const queue = queueState(busy)
    expect(queue && readyToSend(busy, queue)).toBe(false)
  })
})

describe('stopped.ts: what a Stop or a failed turn does (whenStopped) [R-QUEUE-CLIENT-STOPPED]', () => {
  const ending = (status: 'cancelled' | 'error', executionId = 'e1'): StepEvent => ({
    type: 'turn-ended',
    ending: { executionId, origin: 'followed', status, messages: [], error: null },
  })
  const stopping = (state: EngineState): EngineState => ({
    ...state,
    stop: { kind: 'execution', executionId: 'e1', accepted: false } as EngineState['stop'],
  })
  it.each<
    [
      string,
      'pause' | 'keep' | 'draft',
      boolean,
      StepEvent[],
      readonly string[] | undefined,
      string,
    ]
  >([
    [
      'pause, Stop pressed here: paused, its execution kept',
      'pause',
      true,
      [],
      undefined,
      'paused e1',
    ],
    [
      'pause, a cancelled ending heard by the sender: paused',
      'pause',
      false,
      [ending('cancelled')],
      undefined,
      'paused',
    ],
    [
      'pause, the ending of a Stop already paused for: not again',
      'pause',
      false,
      [ending('cancelled')],
      ['e1'],
      'running e1',
    ],
    ['pause, a failed turn: paused', 'pause', false, [ending('error')], undefined, 'paused'],
    ['keep, Stop pressed here: goes on', 'keep', true, [], undefined, 'running'],
    ['draft, Stop pressed here: into the draft', 'draft', true, [], undefined, 'draft a'],
  ])('%s', (_, whenStopped, pressed, endings, stopped, expected) => {
    const before = ready(queueOf(item('a')))
    const held = queueState(before)
    const queue: QueueState | undefined = held && {
      ...held,
      whenStopped,
      view: { ...held.view, ...(stopped && { stopped }) },
    }
    if (!queue) throw new Error('no queue')
    const state = pressed ? stopping(before) : before
    // What the step reported: Stop pressed here, and the endings the record showed.
    const events: StepEvent[] = [
      ...(pressed ? [{ type: 'stop-pressed' as const }] : []),
      ...endings,
    ]
    const after = afterStop(state, queue, events)
    const shown = after.queue.view
    const outcome =
      after.state.draft !== ''
        ? `draft ${after.state.draft}`
        : `${isPaused(shown) ? 'paused' : 'running'} ${(shown.stopped ?? []).join(',')}`
    expect(outcome.trim()).toBe(expected)
  })
})

describe('view.ts: what a session with a queue shows [R-QUEUE-CLIENT-MEMORY]', () => {
  it.each<[string, Partial<QueueState> | null, boolean]>([
    ['before the store answered: not known to be lost', { attached: false, kept: false }, true],
    ['IndexedDB: kept', { attached: true, kept: true }, true],
    ['this page only (IndexedDB refused)', { attached: true, kept: false }, false],
  ])('queueKept: %s', (_, patch, kept) => {
    const state = ready()
    const held = queueState(state)
    const queue = held && patch ? { ...held, ...patch } : held
    expect(queueFields(queue, undefined).queueKept).toBe(kept)
  })

  it.each<[string, string, { canSend: boolean; canSubmit: boolean }]>([
    ['an empty draft: nothing to send', '  ', { canSend: true, canSubmit: false }],
    ['a draft while a turn runs: sent into the queue', 'later', { canSend: true, canSubmit: true }],
  ])('the gate with a queue: %s', (_, draft, gate) => {
    const busy = { ...ready(null, runningTurn({ executionId: 'e1' })), draft }
    expect(queueGate(selectSessionState(busy), busy)).toEqual(gate)
  })

  // Found by the queue model (seed 1106752450): a page reloaded after its POST, the draft sent again
  // under the id it went with and queued in another tab's store, heard after the read that holds
  // it: shown queued and in the transcript, and sent again, until the next read.
  it('an item whose id the record already holds leaves the queue as it arrives, not at the next read [R-QUEUE-CLIENT-ONCE]', () => {
    const [question, answer] = finishedTurn('e1', 'Hi', 'Hello')
    const record = snapshot([{ ...question!, messageId: 'sent-before' }, answer!])
    const heard = run(ready(null, record), {
      type: 'queue-stored',
      stored: serializeQueue(queueOf({ id: 'sent-before', text: 'Hi', status: 'queued' })),
    })
    expect(queueState(heard.state)?.view.items).toEqual([])
  })

  // Found by the queue model once its tabs typed and sent drafts (issue 35): Send pressed twice
  // while the draft's own POST was unanswered queued the same text again, and both were sent.
  it.each<[string, string | undefined, string]>([
    ['Send again (the draft)', undefined, 'busy'],
    ['submit(text) with the same text', 'hello', 'busy'],
    ['submit(text) with another text: queued', 'other', 'queued'],
  ])('the draft on its way as its own turn: %s [R-QUEUE-DRAFT-ON-ITS-WAY]', (_, text, outcome) => {
    const typed = run(ready(), { type: 'draft-changed', draft: 'hello' }).state
    const sent = run(typed, {
      type: 'submit-requested',
      request: 1,
      text: undefined,
      messageId: 'first',
      at: 1,
    })
    expect(sent.commands.map((c) => c.type)).toContain('post')
    // Kept in the composer until accepted, but not sendable again meanwhile.
    expect(sent.state.draft).toBe('hello')
    expect(queueGate(selectSessionState(sent.state), sent.state).canSubmit).toBe(false)
    const again = run(sent.state, {
      type: 'submit-requested',
      request: 2,
      text,
      messageId: 'second',
      at: 2,
    })
    const settled = again.commands.find((c) => c.type === 'settle-submit')
    expect(settled && 'result' in settled && settled.result.outcome).toBe(outcome)
    expect(queueState(again.state)?.view.items.map((i) => i.text) ?? []).toEqual(
      outcome === 'queued' ? [text] : [],
    )
    expect(again.commands.filter((c) => c.type === 'post')).toHaveLength(0)
  })
})

describe("reduce.ts: the queue's actions and the session's lifecycle, as commands [R-QUEUE-DRAFT-STORED]", () => {
  const types = (commands: Command[]) => commands.map((c) => c.type)
  it.each<[string, () => { state: EngineState; action: EngineAction }, string[]]>([
    [
      'mounted: the store is opened',
      () => ({
        state: initialEngineState({ key, tab: 'A' }),
        action: { type: 'mounted', cached: { kind: 'none' }, at: 0, stampedAt: 0, random: 0 },
      }),
      ['queue-open'],
    ],
    [
      'activated: followed',
      () => ({ state: ready(), action: { type: 'deactivated' } }),
      ['queue-unfollow'],
    ],
    [
      'the store refused: this page’s memory, said once',
      () => ({
        state: run(initialEngineState({ key, tab: 'A' }), {
          type: 'activated',
          at: 0,
          pushConnected: true,
        }).state,
        action: { type: 'queue-store-refused', error: errorRecord('unsupported', 'denied') },
      }),
      ['queue-fallback', 'warn'],
    ],
    [
      'a message sent from the draft while busy: queued, the draft stored empty, written',
      () => ({
        state: { ...ready(null, runningTurn({ executionId: 'e1' })), draft: 'later' },
        action: { type: 'submit-requested', request: 1, text: undefined, messageId: 'm1', at: 2 },
      }),
      ['settle-submit', 'queue-lock', 'store-draft'],
    ],
    [
      'disposed with a change not written: flushed, then closed',
      () => ({
        state: run(ready(null, runningTurn({ executionId: 'e1' })), {
          type: 'submit-requested',
          request: 1,
          text: 'x',
          messageId: 'm1',
          at: 2,
        }).state,
        action: { type: 'disposed' },
      }),
      ['queue-flush', 'queue-close'],
    ],
  ])('%s', (_, given, expected) => {
    const { state, action } = given()
    const step = reducer(state, action, engineConfig)
    expect(types(step.commands).filter((t) => t !== 'set-alarm' && t !== 'cancel-read')).toEqual(
      expected,
    )
    if (action.type === 'submit-requested')
      expect(step.commands).toContainEqual({ type: 'store-draft', draft: '', sentAs: null })
  })

  it('activated: followed (its push heard, the sender lock asked), after the engine’s own commands', () => {
    const step = reducer(
      initialEngineState({ key, tab: 'A' }),
      { type: 'activated', at: 0, pushConnected: true },
      engineConfig,
    )
    expect(
      step.commands.at(-1)?.type === 'set-alarm' ? step.commands.at(-2) : step.commands.at(-1),
    ).toEqual({
      type: 'queue-follow',
    })
  })
})
