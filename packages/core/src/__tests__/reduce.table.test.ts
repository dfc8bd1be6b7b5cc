/**
 * The reducer's rules as tables, one per action: given a state, when the action, then these state
 * fields, these commands (all of them, in order) and this status. A row checks only the fields its
 * rule is about, so a change of the state's shape elsewhere touches few rows. `reduce.test.ts`
 * holds the scenarios; these are the actions it had no test of.
 */
import { describe, expect, it } from 'vitest'
import type { SessionStatus } from '../engine/derive'
import { openSuspensions, sessionStatus } from '../engine/derive'
import { applyTurnEvents, startTurn } from '../engine/fold'
import type { EngineAction, EngineConfig, EngineState, ReadState } from '../engine/model'
import { initialEngineState, reduce, snapshotAction } from '../engine/reduce'
import { selectSessionState } from '../engine/select'
import { submitDueAt } from '../engine/slices/ownTurn'
import type { ErrorRecord, PreviewChatErrorCode } from '../wire/contract/errors'
import { errorRecord } from '../wire/contract/errors'
import type { TurnEvent } from '../wire/contract/events'
import type { HistorySnapshot, Message } from '../wire/contract/snapshot'
import {
  assistantMessage,
  engineConfig,
  finishedTurn,
  key,
  runningTurn,
  snapshot,
  messageIdOf,
  userMessage,
} from './harness'

// --- errors: built and compared in one place each (they may become plain records) ---------------

/** An error as an action carries it. */
const err = (code: PreviewChatErrorCode, extra: Omit<ErrorRecord, 'code' | 'message'> = {}) =>
  errorRecord(code, `planted ${code}`, extra)

/** What an expected error must have: its code and the fields named, whatever object holds them. */
const anErr = (code: PreviewChatErrorCode, extra: Record<string, unknown> = {}) =>
  expect.objectContaining({ code, ...extra }) as unknown

// --- records --------------------------------------------------------------------------------------

/** A thread with one finished turn: what stays on screen when a read fails. */
const shown = snapshot(finishedTurn('e0', 'Before', 'An answer'))
const suspension = {
  toolCallId: 'tc1',
  runId: 'run1',
  suspendPayload: { runId: 'run1', toolName: 'approve', input: { amount: 5 } },
}
/** A turn that ended waiting for a person: nothing runs, one suspension is open. */
const suspended = snapshot(finishedTurn('e0', 'Pay?', 'Approve it?'), null, [suspension])

// --- states ---------------------------------------------------------------------------------------

const thread = JSON.stringify([key.projectId, key.agentId, key.threadId])

/** A message of tab `tab` on the relay channel. */
const relayFrom = (tab: string, body: Record<string, unknown>): EngineAction => ({
  type: 'relay-received',
  data: { v: 1, tab, thread, ...body },
  at: 5,
  stampedAt: 5,
})

/** Each action's step in turn; the state at the end. */
function after(state: EngineState, ...actions: EngineAction[]): EngineState {
  for (const action of actions) state = reduce(state, action, engineConfig).state
  return state
}

const fresh = (init: Partial<Parameters<typeof initialEngineState>[0]> = {}) =>
  initialEngineState({ key, tab: 'A', ...init })

/** Subscribed to, with the push channel connected or not; nothing read yet. */
const listened = (push = true, init: Partial<Parameters<typeof initialEngineState>[0]> = {}) =>
  after(fresh(init), { type: 'activated', at: 0, pushConnected: push })

const readOf = (record: HistorySnapshot, at = 1): EngineAction[] => [
  { type: 'read-started', at, fetch: 1 },
  snapshotAction(record, 'read', { at, stampedAt: at, random: 0 }),
]

/** Listened to, push connected, and the first read answered with `record`. */
const idle = (record: HistorySnapshot = snapshot([])) => after(listened(), ...readOf(record))

/** The record shows another device's turn `e1` running. */
const following = () => idle(runningTurn({ executionId: 'e1' }))

/** A read in flight, started at 10. */
const reading = (state: EngineState) => after(state, { type: 'read-started', at: 10, fetch: 2 })

const withReads = (state: EngineState, reads: Partial<ReadState>): EngineState => ({
  ...state,
  reads: { ...state.reads, ...reads },
})

/**
 * After a reload with `persistTranscripts()`: the kept transcript from the cache and the kept
 * live turn `e1` on screen, the first read in flight.
 */
const restored = () =>
  reading(
    after(
      listened(true, {
        live: startTurn({
          executionId: 'e1',
          sessionId: key.threadId,
          message: 'Kept',
          createdAt: '2026-11-30T10:00:00.000Z',
        }),
      }),
      snapshotAction(shown, 'cache', { at: 0, stampedAt: 0, random: 0 }),
    ),
  )

const submit = (request: number, text?: string): EngineAction => ({
  type: 'submit-requested',
  request,
  messageId: messageIdOf(request),
  text,
  at: 2,
})
const resume = (request: number, toolCallId = 'tc1'): EngineAction => ({
  type: 'resume-requested',
  request,
  runId: 'run1',
  toolCallId,
  resumeData: { approved: true },
  at: 30,
})
const turnEvents = (token: number, ...events: TurnEvent[]): EngineAction => ({
  type: 'turn-events',
  token,
  events,
  at: 3,
  stampedAt: 3,
})
const turnStarted = (token: number, executionId: string) =>
  turnEvents(token, { type: 'execution-started', executionId, sessionId: key.threadId })
const stopAsked = (request: number): EngineAction => ({ type: 'stop-requested', request, at: 20 })

/** This tab's message `Hi` (request 1), posted and not accepted yet. */
const posting = (state = idle()) => after(state, submit(1, 'Hi'))
/** This tab's message accepted as `e1`, its stream delivering. */
const streaming = (state = idle()) => after(posting(state), turnStarted(1, 'e1'))
/** Stop of the suspended turn through its run, asked by each of `requests`, not answered yet. */
const stoppingRuns = (...requests: number[]) => after(idle(suspended), ...requests.map(stopAsked))

// --- the table runner -----------------------------------------------------------------------------

interface Row {
  /** What the row says, with the rule's id in brackets. */
  title: string
  given: EngineState
  when: EngineAction
  /** The state fields the rule is about (`toMatchObject`). */
  then?: Record<string, unknown>
  /** The state is the very same object: the action changes nothing. */
  unchanged?: true
  /** Every command, in order (each matched by the fields it names); none when left out. */
  commands?: unknown[]
  status?: SessionStatus
  config?: Partial<EngineConfig>
  /** The transcript shown after it, each message as `id text` (`transcript`). */
  shows?: string[]
}

/** The transcript a state shows, each message as its id and its text. */
const transcript = (state: EngineState) =>
  selectSessionState(state).messages.map(
    (message) =>
      `${message.id} ${message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')}`,
  )

function check({ given, when, then, unchanged, commands = [], status, config, shows }: Row) {
  const step = reduce(given, when, { ...engineConfig, ...config })
  if (unchanged) expect(step.state).toBe(given)
  if (then) expect(step.state).toMatchObject(then)
  if (shows) expect(transcript(step.state)).toEqual(shows)
  // The alarm (`set-alarm`) is the runner's: its own tests are in runner.test.ts.
  expect(step.commands.filter((command) => command.type !== 'set-alarm')).toMatchObject(commands)
  if (status) expect(sessionStatus(step.state)).toBe(status)
}

const table = (rows: Row[]) => it.each(rows)('$title', check)

const push = (connected: boolean, at = 100): EngineAction => ({
  type: 'push-changed',
  connected,
  at,
  random: 0,
})
/** A push notification about this thread. */
const pushAbout = (): EngineAction => ({
  type: 'push-message',
  message: {
    type: 'agentExecutionUpdated',
    data: {
      projectId: key.projectId,
      agentId: key.agentId,
      threadId: key.threadId,
      executionId: 'e1',
    },
  },
})
const notFoundAnswer: EngineAction = {
  type: 'read-failed',
  error: err('not_found', { status: 404 }),
  at: 2,
  random: 0,
}

// With `random: 0` a backoff waits half its ceiling: retries 250, 500, … ms, polls 500, 1000, ….

describe('read-failed', () => {
  const failed = (error: ErrorRecord): EngineAction => ({
    type: 'read-failed',
    error,
    at: 100,
    random: 0,
  })
  table([
    {
      title:
        'a failed read keeps the transcript, sets readError and retries after backoff [R-READ-KEEPS]',
      given: reading(idle(shown)),
      when: failed(err('network_error')),
      then: {
        recorded: shown,
        readError: anErr('network_error'),
        notFound: false,
        reads: { inFlight: false, failures: 1, followUpAt: 100 + 250 },
      },
      status: 'idle',
    },
    {
      title: 'while nothing runs, the fourth failure in a row is not retried [R-READ-BACKOFF]',
      given: withReads(reading(idle(shown)), { failures: 3 }),
      when: failed(err('server_error')),
      then: { recorded: shown, reads: { failures: 4, followUpAt: null } },
    },
    {
      title:
        'while a turn runs, reads retry without end, the backoff capped at retry.maxMs [R-READ-BACKOFF]',
      given: withReads(reading(following()), { failures: 9 }),
      when: failed(err('server_error')),
      then: { reads: { failures: 10, followUpAt: 100 + 15_000 / 2 } },
      status: 'following',
    },
    {
      title: 'no retry before the server’s Retry-After [R-READ-RETRY-AFTER]',
      given: reading(idle(shown)),
      when: failed(err('server_error', { status: 503, retryAfterMs: 2_000 })),
      then: { reads: { notBefore: 100 + 2_000, followUpAt: 100 + 2_000 } },
    },
    {
      title: 'a Retry-After longer than retry.maxMs waits retry.maxMs [R-READ-RETRY-AFTER]',
      given: reading(idle(shown)),
      when: failed(err('server_error', { status: 429, retryAfterMs: 3_600_000 })),
      then: { reads: { notBefore: 100 + 15_000, followUpAt: 100 + 15_000 } },
    },
    {
      title:
        '404 with no turn of this tab there: notFound, nothing shown, no retry, no readError [R-READ-404 R-READ-404-NO-ERROR]',
      given: reading(idle(shown)),
      when: failed(err('not_found', { status: 404 })),
      then: {
        notFound: true,
        synced: true,
        recorded: null,
        readError: null,
        reads: { inFlight: false, followUpAt: null },
      },
      status: 'idle',
    },
    {
      title:
        '404 while this tab’s message is on its way: not recorded yet, retried, no readError [R-N8N-NOT-RECORDED-YET R-READ-404-NO-ERROR]',
      given: reading(posting(idle())),
      when: failed(err('not_found', { status: 404 })),
      then: { notFound: false, readError: null, reads: { followUpAt: 100 + 250 } },
      status: 'submitting',
    },
    {
      title:
        '404 while this tab streams its turn: the live turn stays, retried [R-N8N-NOT-RECORDED-YET]',
      given: reading(streaming()),
      when: failed(err('not_found', { status: 404 })),
      then: {
        notFound: false,
        live: { executionId: 'e1' },
        reads: { followUpAt: 100 + 250 },
      },
      status: 'streaming',
    },
    {
      title:
        '404 after this tab’s turn ended live, before the record has it: kept, retried [R-N8N-NOT-RECORDED-YET]',
      given: reading(
        after(streaming(), turnEvents(1, { type: 'done', executionId: 'e1' }), {
          type: 'stream-ended',
          token: 1,
          end: { kind: 'terminal' },
        }),
      ),
      when: failed(err('not_found', { status: 404 })),
      then: { notFound: false, live: { executionId: 'e1', ended: true } },
      status: 'idle',
    },
    {
      title:
        'a page instead of the API (routeMissing) is no missing thread: kept, retried [R-READ-WRONG-URL]',
      given: reading(idle(shown)),
      when: failed(err('not_found', { status: 404, routeMissing: true })),
      then: {
        notFound: false,
        recorded: shown,
        readError: anErr('not_found', { routeMissing: true }),
        reads: { followUpAt: 100 + 250 },
      },
    },
    {
      title:
        '403 clears the transcript kept across a reload, and persistence forgets it [R-PERSIST-RELOAD]',
      given: restored(),
      when: failed(err('forbidden', { status: 403 })),
      config: { keepLive: true },
      then: {
        recorded: null,
        live: null,
        kept: false,
        settled: [],
        notFound: false,
        readError: anErr('forbidden'),
        reads: { followUpAt: 100 + 250 },
      },
      commands: [{ type: 'forget-kept' }, { type: 'keep-live', turn: null }],
      status: 'recovering',
    },
    {
      title: '403 as a page (routeMissing) clears nothing [R-READ-WRONG-URL]',
      given: restored(),
      when: failed(err('forbidden', { status: 403, routeMissing: true })),
      config: { keepLive: true },
      then: { recorded: shown, live: { executionId: 'e1' }, kept: true },
    },
    {
      title:
        '404 of the read on its way when the channel connected: the connect’s read is needless [R-READ-404-ONCE]',
      given: after(reading(listened(false)), push(true)),
      when: failed(err('not_found', { status: 404 })),
      then: { notFound: true, readError: null, reads: { wanted: false, followUpAt: null } },
    },
    {
      title:
        '404, but a push about the thread came after the connect: its read is still wanted [R-READ-404-ONCE]',
      given: after(reading(listened(false)), push(true), pushAbout()),
      when: failed(err('not_found', { status: 404 })),
      then: { notFound: true, readError: null, reads: { wanted: true } },
    },
    {
      title:
        'this tab’s message taken on a thread found missing: notFound clears, no readError at any step [R-READ-404-NO-ERROR]',
      given: posting(after(reading(listened()), failed(err('not_found', { status: 404 })))),
      when: turnStarted(1, 'e1'),
      then: { notFound: false, readError: null, own: { phase: 'streaming' } },
      commands: [
        { type: 'settle-submit', request: 1, result: { outcome: 'accepted', executionId: 'e1' } },
        { type: 'relay', message: { kind: 'turn', seq: 0 } },
      ],
      status: 'streaming',
    },
    {
      title: '404 with only a kept live turn (none this tab ran): gone, forgotten [R-READ-404]',
      given: restored(),
      when: failed(err('not_found', { status: 404 })),
      config: { keepLive: true },
      then: { notFound: true, recorded: null, live: null, kept: false },
      commands: [{ type: 'forget-kept' }, { type: 'keep-live', turn: null }],
      status: 'idle',
    },
  ])
})

describe('push-changed', () => {
  table([
    {
      title: 'connected after a read: missed notifications, so a read [R-READ-SIGNALS]',
      given: after(listened(false), ...readOf(shown)),
      when: push(true),
      then: { push: { connected: true, lost: false }, reads: { wanted: true, followUpAt: null } },
    },
    {
      title:
        'connected before any read (a new thread): nothing was missed, no read [R-READ-SIGNALS]',
      given: listened(false, { isNew: true }),
      when: push(true),
      then: { push: { connected: true, lost: false }, reads: { wanted: false, count: 0 } },
    },
    {
      title: 'reconnected after a loss, even before any read: a read [R-READ-SIGNALS]',
      given: after(listened(true, { isNew: true }), push(false, 50)),
      when: push(true),
      then: { push: { connected: true, lost: false }, reads: { wanted: true } },
    },
    {
      title:
        'connected after a read found the thread missing: nothing to miss there, no read [R-READ-404-ONCE]',
      given: after(listened(false), { type: 'read-started', at: 1, fetch: 1 }, notFoundAnswer),
      when: push(true),
      then: { push: { connected: true, lost: false }, reads: { wanted: false, count: 1 } },
    },
    {
      title:
        'connected while the first read is on its way: a read, for the connect only [R-READ-404-ONCE]',
      given: reading(listened(false)),
      when: push(true),
      then: { reads: { wanted: true, onConnect: true, inFlight: true } },
    },
    {
      title: 'lost while nothing runs: marked lost, no polling [R-READ-POLL]',
      given: idle(shown),
      when: push(false),
      then: { push: { connected: false, lost: true }, reads: { wanted: false, followUpAt: null } },
      status: 'idle',
    },
    {
      title: 'lost while a turn runs: polling starts with backoff [R-READ-POLL]',
      given: following(),
      when: push(false),
      then: { push: { connected: false, lost: true }, reads: { polls: 1, followUpAt: 100 + 500 } },
      status: 'following',
    },
    {
      title: 'lost while this tab streams its turn: polled too [R-READ-POLL]',
      given: streaming(),
      when: push(false),
      then: { push: { connected: false, lost: true }, reads: { polls: 1, followUpAt: 100 + 500 } },
      status: 'streaming',
    },
    {
      title: 'back while a turn runs: polling stops, its backoff kept, a read [R-PUSH-FLAPPING]',
      given: withReads(after(following(), push(false, 50)), { polls: 3 }),
      when: push(true),
      then: {
        push: { connected: true, lost: false },
        reads: { polls: 3, followUpAt: null, wanted: true },
      },
    },
    {
      title: 'lost again at once: the polls go on from their backoff, not afresh [R-PUSH-FLAPPING]',
      given: withReads(following(), { polls: 3 }),
      when: push(false),
      then: { reads: { polls: 4, followUpAt: 100 + 8_000 / 2 } },
    },
    {
      title:
        'a session nobody listens to asks no read when the channel returns [R-LIFECYCLE-QUIET]',
      given: after(idle(shown), push(false, 50), { type: 'deactivated' }),
      when: push(true),
      then: { active: false, reads: { wanted: false } },
    },
  ])
})

describe('runs-answered', () => {
  const answered = (cancelled: boolean): EngineAction => ({ type: 'runs-answered', cancelled })
  table([
    {
      title:
        'cancelled: the waiting stop() is told so; stopping until a read after it [R-STOP-SUSPENDED]',
      given: stoppingRuns(9),
      when: answered(true),
      then: {
        stop: { kind: 'runs', answered: true, cancelled: true, waiters: [] },
        reads: { wanted: true },
      },
      commands: [{ type: 'settle-stop', requests: [9], result: { cancelRequested: true } }],
      status: 'stopping',
    },
    {
      title:
        'not cancelled: cancelRequested false, and a read says what the runs became [R-STOP-ANSWER]',
      given: stoppingRuns(9),
      when: answered(false),
      then: { stop: { kind: 'runs', answered: true, cancelled: false }, reads: { wanted: true } },
      commands: [{ type: 'settle-stop', requests: [9], result: { cancelRequested: false } }],
      status: 'stopping',
    },
    {
      title: 'every stop() that joined is answered by the one request [R-STOP-ONE-REQUEST]',
      given: stoppingRuns(8, 9),
      when: answered(true),
      commands: [{ type: 'settle-stop', requests: [8, 9], result: { cancelRequested: true } }],
    },
    {
      title: 'a second answer changes nothing [R-STOP-ONE-REQUEST]',
      given: after(stoppingRuns(9), answered(true)),
      when: answered(false),
      unchanged: true,
    },
    {
      title: 'an answer with no Stop through runs under way changes nothing [R-STOP-LATE]',
      given: idle(suspended),
      when: answered(true),
      unchanged: true,
    },
    {
      title: 'a Stop by execution id is not answered by a runs answer [R-STOP-BY-ID]',
      given: after(streaming(), stopAsked(9)),
      when: answered(true),
      unchanged: true,
      status: 'stopping',
    },
  ])
})

describe('runs-failed', () => {
  const failed = (error: ErrorRecord): EngineAction => ({ type: 'runs-failed', error })
  table([
    {
      title:
        'the Stop is dropped with its typed error; the suspension stays, a read follows [R-STOP-FAILED]',
      given: stoppingRuns(9),
      when: failed(err('forbidden', { status: 403 })),
      then: { stop: null, error: anErr('forbidden'), reads: { wanted: true } },
      commands: [
        {
          type: 'settle-stop',
          requests: [9],
          result: { cancelRequested: false, error: anErr('forbidden') },
        },
      ],
      status: 'idle',
    },
    {
      title: 'every stop() that joined is told the one failure [R-STOP-ONE-REQUEST]',
      given: stoppingRuns(8, 9),
      when: failed(err('network_error')),
      commands: [
        {
          type: 'settle-stop',
          requests: [8, 9],
          result: { cancelRequested: false, error: anErr('network_error') },
        },
      ],
    },
    {
      title: 'a failure after the answer changes nothing: the answer stands [R-STOP-ANSWER]',
      given: after(stoppingRuns(9), { type: 'runs-answered', cancelled: true }),
      when: failed(err('network_error')),
      unchanged: true,
      status: 'stopping',
    },
    {
      title: 'a failure with no Stop through runs under way changes nothing [R-STOP-LATE]',
      given: idle(suspended),
      when: failed(err('network_error')),
      unchanged: true,
    },
  ])
})

describe('read-cancelled', () => {
  const cancelled: EngineAction = { type: 'read-cancelled', fetch: 2 }
  table([
    {
      title: 'the read in flight ends, so the next one may start [R-READ-QUERY]',
      given: reading(idle(shown)),
      when: cancelled,
      then: { recorded: shown, reads: { inFlight: false, wanted: false } },
      status: 'idle',
    },
    {
      title: 'the read wanted behind it stays wanted (and urgent) [R-READ-COALESCE]',
      given: withReads(reading(idle(shown)), { wanted: true, urgent: true }),
      when: cancelled,
      then: { reads: { inFlight: false, wanted: true, urgent: true } },
    },
    {
      title:
        'the first read cancelled: still recovering, nothing taken as read [R-GATE-FIRST-READ]',
      given: reading(listened()),
      when: cancelled,
      then: { synced: false, reads: { inFlight: false } },
      status: 'recovering',
    },
    {
      title: 'with no read in flight, the reads stay as they were [R-READ-QUERY]',
      given: idle(shown),
      when: cancelled,
      then: { reads: idle(shown).reads },
    },
  ])
})

describe('read-wanted', () => {
  const wanted = (urgent: boolean): EngineAction => ({ type: 'read-wanted', urgent })
  table([
    {
      title: 'a signal (visible, online) asks for a read, spaced like any other [R-READ-SIGNALS]',
      given: idle(shown),
      when: wanted(false),
      then: { reads: { wanted: true, urgent: false } },
      status: 'idle',
    },
    {
      title: 'refresh() asks for an urgent read, which skips the spacing [R-READ-COALESCE]',
      given: idle(shown),
      when: wanted(true),
      then: { reads: { wanted: true, urgent: true } },
    },
    {
      title: 'an urgent read asked stays urgent when a plain one joins it [R-READ-COALESCE]',
      given: after(idle(shown), wanted(true)),
      when: wanted(false),
      then: { reads: { wanted: true, urgent: true } },
    },
    {
      title:
        'while a read is in flight, one is wanted behind it, never two in flight [R-READ-COALESCE]',
      given: reading(idle(shown)),
      when: wanted(false),
      then: { reads: { inFlight: true, wanted: true } },
    },
    {
      title: 'a session nobody listens to reads nothing [R-LIFECYCLE-QUIET]',
      given: after(idle(shown), { type: 'deactivated' }),
      when: wanted(true),
      unchanged: true,
    },
    {
      title: 'a disposed session reads nothing [R-LIFECYCLE-DISPOSE]',
      given: after(idle(shown), { type: 'disposed' }),
      when: wanted(true),
      unchanged: true,
    },
  ])
})

describe('prefetch-requested: its call waits for the read on its way, and only for it [R-READ-PREFETCH-SETTLES]', () => {
  const prefetch = (request: number): EngineAction => ({
    type: 'prefetch-requested',
    at: 3,
    request,
  })
  /** Nobody listens yet; the prefetch's read (request 7) on its way, its fetch reported. */
  const prefetching = () => after(fresh(), prefetch(7), { type: 'read-started', at: 3, fetch: 1 })
  const settled = (...requests: number[]) => ({ type: 'settle-refresh', requests })
  table([
    {
      title: 'before anything listens: the read starts, and the call waits for it',
      given: fresh(),
      when: prefetch(7),
      then: { reads: { inFlight: true, waiters: [7] } },
      commands: [{ type: 'read' }],
      status: 'recovering',
    },
    {
      title: 'answered: settled in the step that takes the record, not before',
      given: prefetching(),
      when: snapshotAction(shown, 'read', { at: 4, stampedAt: 4, random: 0 }),
      then: { recorded: shown, reads: { inFlight: false, waiters: [] } },
      commands: [settled(7)],
    },
    {
      title: 'failed: settled, the failure kept as readError',
      given: prefetching(),
      when: { type: 'read-failed', error: err('server_error'), at: 4, random: 0 },
      then: { readError: anErr('server_error'), reads: { inFlight: false, waiters: [] } },
      commands: [settled(7)],
    },
    {
      title: 'not found: settled',
      given: prefetching(),
      when: notFoundAnswer,
      then: { notFound: true, reads: { waiters: [] } },
      commands: [settled(7)],
    },
    {
      title: 'cancelled (the app’s cancelQueries, a removed query): settled',
      given: prefetching(),
      when: { type: 'read-cancelled', fetch: 1 },
      then: { reads: { inFlight: false, waiters: [] } },
      commands: [settled(7)],
    },
    {
      title: 'a replaced fetch’s end is not the read’s: still waiting',
      given: prefetching(),
      when: { type: 'read-cancelled', fetch: 9 },
      unchanged: true,
    },
    {
      title: 'disposed mid-read: the read is cancelled and the call settled',
      given: prefetching(),
      when: { type: 'disposed' },
      then: { disposed: true, reads: { waiters: [] } },
      commands: [{ type: 'cancel-read' }, settled(7)],
    },
    {
      title: 'the session starts mid-read: still waiting, for the same read',
      given: prefetching(),
      when: { type: 'activated', at: 4, pushConnected: true },
      then: { active: true, reads: { inFlight: true, wanted: false, waiters: [7] } },
    },
    {
      title: 'a second prefetch joins the read on its way: no second read, both wait',
      given: prefetching(),
      when: prefetch(8),
      then: { reads: { inFlight: true, count: 1, waiters: [7, 8] } },
    },
    {
      title: 'refresh() where nobody listens waits for a prefetch’s read on its way too',
      given: prefetching(),
      when: { type: 'read-wanted', urgent: true, request: 8 },
      then: { reads: { wanted: false, waiters: [7, 8] } },
    },
    {
      title: 'the thread was read (listened to, idle): nothing read, settled at once',
      given: idle(shown),
      when: prefetch(7),
      then: { reads: { waiters: [] } },
      commands: [settled(7)],
    },
    {
      title: 'a new thread (isNew): nothing to read, settled at once',
      given: fresh({ isNew: true }),
      when: prefetch(7),
      commands: [settled(7)],
    },
    {
      title: 'listened to with its first read on its way: waits for that read',
      given: reading(listened()),
      when: prefetch(7),
      then: { reads: { inFlight: true, count: 1, waiters: [7] } },
    },
    {
      title: 'a disposed session: settled at once, nothing read',
      given: after(fresh(), { type: 'disposed' }),
      when: prefetch(7),
      commands: [settled(7)],
    },
  ])
})

describe('draft-changed', () => {
  const typed = (draft: string): EngineAction => ({ type: 'draft-changed', draft })
  table([
    {
      title: 'the draft changes and is stored for a reload [R-DRAFT-RELOAD]',
      given: idle(),
      when: typed('Hel'),
      then: { draft: 'Hel' },
      commands: [{ type: 'store-draft', draft: 'Hel' }],
    },
    {
      title: 'emptied: the stored draft is removed [R-DRAFT-RELOAD]',
      given: after(idle(), typed('Hel')),
      when: typed(''),
      then: { draft: '' },
      commands: [{ type: 'store-draft', draft: '' }],
    },
    {
      title: 'the same text again stores nothing [R-DRAFT-RELOAD]',
      given: after(idle(), typed('Hel')),
      when: typed('Hel'),
      then: { draft: 'Hel' },
    },
    {
      title: 'editable while a turn streams; the turn is untouched [R-DRAFT-EDITABLE]',
      given: streaming(),
      when: typed('Next'),
      then: { draft: 'Next', own: { token: 1, phase: 'streaming' } },
      commands: [{ type: 'store-draft', draft: 'Next' }],
      status: 'streaming',
    },
    {
      title:
        'editable while the message is on its way; the message sent stays as sent [R-DRAFT-EDITABLE]',
      given: posting(),
      when: typed('Hi!'),
      then: { draft: 'Hi!', own: { text: 'Hi' } },
      commands: [{ type: 'store-draft', draft: 'Hi!' }],
      status: 'submitting',
    },
    {
      title: 'editable before anything subscribes [R-DRAFT-EDITABLE]',
      given: fresh(),
      when: typed('Early'),
      then: { draft: 'Early', active: false },
      commands: [{ type: 'store-draft', draft: 'Early' }],
    },
    {
      title: 'a disposed session stores nothing more [R-LIFECYCLE-DISPOSE]',
      given: after(idle(), { type: 'disposed' }),
      when: typed('Late'),
      unchanged: true,
    },
  ])
})

describe('error-cleared', () => {
  const cleared: EngineAction = { type: 'error-cleared' }
  const refused = after(posting(after(idle(), { type: 'draft-changed', draft: 'Hi' })), {
    type: 'post-failed',
    token: 1,
    error: err('conflict', { status: 409 }),
  })
  table([
    {
      title: 'a refused message’s error is forgotten; its draft stays [R-DRAFT-KEPT]',
      given: refused,
      when: cleared,
      then: { error: null, draft: 'Hi' },
    },
    {
      title: 'a failed Stop’s error is forgotten [R-STOP-FAILED]',
      given: after(stoppingRuns(9), { type: 'runs-failed', error: err('forbidden') }),
      when: cleared,
      then: { error: null, stop: null },
      status: 'idle',
    },
    {
      title: 'readError is the reads’: it stays until a read succeeds [R-READ-KEEPS]',
      given: after(reading(idle(shown)), {
        type: 'read-failed',
        error: err('network_error'),
        at: 100,
        random: 0,
      }),
      when: cleared,
      then: { error: null, readError: anErr('network_error'), reads: { followUpAt: 350 } },
    },
    {
      title: 'a disposed session changes no more [R-LIFECYCLE-DISPOSE]',
      given: after(refused, { type: 'disposed' }),
      when: cleared,
      unchanged: true,
    },
  ])
})

describe('resume-requested', () => {
  const busy = (request: number) => ({
    type: 'settle-submit',
    request,
    result: { outcome: 'busy' },
  })
  table([
    {
      title:
        'an open suspension is answered: one POST of the resume, the other tabs told [R-RECOVER-SUSPENDED]',
      given: idle(suspended),
      when: resume(5),
      then: {
        own: { token: 5, text: null, resuming: 'tc1', phase: 'posting' },
        streams: [5],
        error: null,
      },
      commands: [
        {
          type: 'post',
          token: 5,
          request: {
            kind: 'resume',
            body: { runId: 'run1', toolCallId: 'tc1', resumeData: { approved: true } },
          },
        },
        { type: 'relay', message: { thread, tab: 'A', kind: 'posting', active: true } },
      ],
      status: 'submitting',
    },
    {
      title: 'it clears the last error and leaves the draft alone [R-DRAFT-KEPT]',
      given: { ...idle(suspended), draft: 'Unsent', error: err('conflict') },
      when: resume(5),
      then: { error: null, draft: 'Unsent' },
      commands: [{ type: 'post' }, { type: 'relay' }],
    },
    {
      title: 'while the answer is on its way, a second is busy and sends nothing [R-GATE-OWN-POST]',
      given: after(idle(suspended), resume(5)),
      when: resume(6),
      then: { own: { token: 5 } },
      commands: [busy(6)],
      status: 'submitting',
    },
    {
      title: 'the answered suspension, while its resumed turn streams: busy [R-POST-ONCE]',
      given: after(idle(suspended), resume(5), turnStarted(5, 'e2')),
      when: resume(6),
      then: { answered: [{ toolCallId: 'tc1' }], own: { token: 5, phase: 'streaming' } },
      commands: [busy(6)],
      status: 'streaming',
    },
    {
      title: 'while another device’s turn runs: busy [R-GATE-RUNNING]',
      given: following(),
      when: resume(5),
      commands: [busy(5)],
      status: 'following',
    },
    {
      title: 'while another tab’s message is on its way: busy [R-GATE-POSTING]',
      given: after(idle(suspended), {
        type: 'relay-received',
        data: { v: 1, tab: 'B', thread, kind: 'posting', active: true },
        at: 5,
        stampedAt: 5,
      }),
      when: resume(5),
      commands: [busy(5)],
      status: 'following',
    },
    {
      title: 'before the first read has said what runs: busy [R-GATE-FIRST-READ]',
      given: listened(),
      when: resume(5),
      commands: [busy(5)],
      status: 'recovering',
    },
    {
      title: 'while a Stop is under way: busy [R-GATE-RUNNING]',
      given: stoppingRuns(9),
      when: resume(5),
      commands: [busy(5)],
      status: 'stopping',
    },
    {
      title: 'after dispose: answered at once, busy, nothing sent [R-LIFECYCLE-DISPOSE]',
      given: after(idle(suspended), { type: 'disposed' }),
      when: resume(5),
      unchanged: true,
      commands: [busy(5)],
    },
  ])

  it('the answered suspension, after its resumed turn ended and before a read: refused, nothing posted [R-SUSPENSION-ANSWERED]', () => {
    const answered = after(
      idle(suspended),
      resume(1),
      turnStarted(1, 'e1'),
      turnEvents(1, { type: 'done', executionId: 'e1' }),
    )
    const step = reduce(answered, resume(2), engineConfig)
    expect(step.state.own).toBeNull()
    expect(step.commands).toMatchObject([
      {
        type: 'settle-submit',
        request: 2,
        result: { outcome: 'failed', error: anErr('invalid_request') },
      },
    ])
  })
})

/**
 * Which endings of a resumed turn reopen its approval card (issue 35, row e), before any record
 * says the answer was taken: one row per ending, the card after it, and the status. The answer is
 * `tc1` of `suspended`, resumed (request 1) and taken as `e1`.
 */
describe('the endings of a resumed turn that reopen its card [R-SUSPENSION-REOPEN]', () => {
  const cutBy = (code: PreviewChatErrorCode): EngineAction => ({
    type: 'stream-ended',
    token: 1,
    end: { kind: 'cut', error: err(code) },
  })
  const ended: EngineAction = { type: 'stream-ended', token: 1, end: { kind: 'terminal' } }
  const aborted: EngineAction = { type: 'stream-ended', token: 1, end: { kind: 'aborted' } }
  const failedEvent = turnEvents(1, { type: 'error', message: 'The tool failed' })
  const cancelledEvent = turnEvents(1, {
    type: 'error',
    message: 'Cancelled',
    errorCode: 'cancelled',
  })
  const suspendedAgain = turnEvents(1, {
    type: 'tool-call-suspended',
    payload: { toolCallId: 'tc2', runId: 'run2', toolName: 'approve', input: {} },
  })
  const stopTaken: EngineAction[] = [
    stopAsked(2),
    { type: 'stop-answered', executionId: 'e1', cancelRequested: true },
  ]
  const stopRefused: EngineAction[] = [
    stopAsked(2),
    { type: 'stop-failed', executionId: 'e1', error: err('server_error', { status: 500 }), at: 21 },
  ]
  const readFails: EngineAction[] = [
    { type: 'read-started', at: 40, fetch: 3 },
    { type: 'read-failed', error: err('network_error'), at: 41, random: 0 },
  ]
  const taken = (...actions: EngineAction[]) =>
    after(idle(suspended), resume(1), turnStarted(1, 'e1'), ...actions)

  it.each<{
    ending: string
    given: EngineState
    when: EngineAction[]
    card: 'open' | 'closed'
    /** The card before the ending: closed once the answer was taken (the default). */
    before?: 'open'
  }>([
    {
      ending: 'refused before it was taken (the card was never hidden)',
      given: after(idle(suspended), resume(1)),
      when: [{ type: 'post-failed', token: 1, error: err('server_error', { status: 500 }) }],
      card: 'open',
      before: 'open',
    },
    {
      ending: 'done, then its stream ends',
      given: taken(),
      when: [turnEvents(1, { type: 'done', executionId: 'e1' }), ended],
      card: 'closed',
    },
    {
      ending: 'suspended again (a new card, tc2, from the record)',
      given: taken(),
      when: [suspendedAgain, ended],
      card: 'closed',
    },
    {
      ending: 'an error event (the resume failed)',
      given: taken(),
      when: [failedEvent, ended, ...readFails],
      card: 'open',
    },
    {
      ending: 'a cut stream (the resume may have failed)',
      given: taken(),
      when: [cutBy('network_error'), ...readFails],
      card: 'open',
    },
    {
      ending: 'this tab closed the stream (dispose, Stop by closing)',
      given: taken(),
      when: [aborted],
      card: 'closed',
    },
    {
      ending: 'a Stop of it taken, then the server’s cancel cuts the stream, reads fail',
      given: taken(...stopTaken),
      when: [cutBy('network_error'), ...readFails],
      card: 'closed',
    },
    {
      ending: 'a Stop of it taken, then the server says error (cancelled), reads fail',
      given: taken(...stopTaken),
      when: [cancelledEvent, ended, ...readFails],
      card: 'closed',
    },
    {
      ending: 'a Stop of it asked, not answered yet, then the stream is cut',
      given: taken(stopAsked(2)),
      when: [cutBy('network_error')],
      card: 'closed',
    },
    {
      ending: 'a Stop of it refused (the turn goes on), then the stream is cut',
      given: taken(...stopRefused),
      when: [cutBy('network_error'), ...readFails],
      card: 'open',
    },
  ])('$ending: the card is $card', ({ given, when, card, before = 'closed' }) => {
    // The card after each step: as it was before the ending, then from the ending (its first
    // action) on as the row says, whatever the failed reads after it.
    const cards = [given, ...when].map((_, i) => {
      const state = after(given, ...when.slice(0, i))
      return openSuspensions(state).some((s) => s.toolCallId === 'tc1') ? 'open' : 'closed'
    })
    expect(cards).toEqual([before, ...when.map(() => card)])
  })

  it('a Stop of a resumed turn is no failure of the resume: the sequence of the issue (Decline, Stop, a cut, failed reads)', () => {
    const declined: EngineAction = {
      type: 'resume-requested',
      request: 1,
      runId: 'run1',
      toolCallId: 'tc1',
      resumeData: { approved: false },
      at: 30,
    }
    const actions = [
      declined,
      turnStarted(1, 'e1'),
      ...stopTaken,
      cutBy('network_error'),
      ...readFails,
    ]
    const states = actions.reduce(
      (seen, action) => [...seen, after(seen.at(-1)!, action)],
      [idle(suspended)],
    )
    expect(
      states.map((state) => [
        sessionStatus(state),
        openSuspensions(state).map((s) => s.toolCallId),
      ]),
    ).toEqual([
      ['idle', ['tc1']],
      ['submitting', ['tc1']],
      ['streaming', []],
      ['stopping', []],
      ['stopping', []],
      ['stopping', []],
      ['stopping', []],
      ['stopping', []],
    ])
  })
})

describe('a message whose POST lost its answer [R-POST-RETRY-DEDUPE]', () => {
  const opened = (dedupesMessages: boolean): EngineAction => ({
    type: 'turn-opened',
    token: 1,
    capabilities: dedupesMessages ? ['message-dedupe'] : [],
  })
  const cut: EngineAction = {
    type: 'stream-ended',
    token: 1,
    end: { kind: 'cut', error: err('stream_cut') },
  }
  const noAnswer: EngineAction = { type: 'post-failed', token: 1, error: err('network_error') }
  /** Posted on a server whose answers said `message-dedupe` (or said nothing: `false`). */
  const postedTo = (dedupes: boolean | null) =>
    dedupes === null ? posting() : after(posting(), opened(dedupes))
  const sentAgain = {
    type: 'post',
    token: 1,
    request: { kind: 'message', body: { message: 'Hi', messageId: messageIdOf(1) } },
  }
  const failed = (code: PreviewChatErrorCode) => [
    { type: 'settle-submit', request: 1, result: { outcome: 'failed', error: anErr(code) } },
    { type: 'relay', message: { kind: 'posting', active: false } },
  ]
  const twiceLost = after(postedTo(true), cut, opened(true))

  it('learns from each turn stream’s answer whether the server dedupes', () => {
    expect(postedTo(null).dedupesMessages).toBeNull()
    expect(postedTo(true).dedupesMessages).toBe(true)
    expect(after(postedTo(true), opened(false)).dedupesMessages).toBe(false)
  })

  table([
    {
      title: 'cut before any event, on a server that dedupes: sent once more, the same ids',
      given: postedTo(true),
      when: cut,
      then: { own: { token: 1, attempts: 2, phase: 'posting' }, streams: [1] },
      commands: [sentAgain],
      status: 'submitting',
    },
    {
      title: 'no answer at all (a network error), on a server that dedupes: sent once more',
      given: postedTo(true),
      when: noAnswer,
      then: { own: { attempts: 2 } },
      commands: [sentAgain],
      status: 'submitting',
    },
    {
      title: 'lost a second time: not sent a third; the draft is kept, the record decides',
      given: twiceLost,
      when: cut,
      then: { own: null, cut: true },
      commands: failed('stream_cut'),
    },
    {
      title: 'on a server not known to dedupe: never sent twice (today’s recovery by reading)',
      given: postedTo(null),
      when: noAnswer,
      then: { own: null, cut: true },
      commands: failed('network_error'),
    },
    {
      title:
        'on a server whose answer said nothing of dedupe (released n8n 2.41): never twice [R-N8N-NO-DEDUPE]',
      given: postedTo(false),
      when: cut,
      then: { own: null },
      commands: failed('stream_cut'),
    },
    {
      title: 'a page instead of the API is not a lost answer: not sent again',
      given: postedTo(true),
      when: { type: 'post-failed', token: 1, error: err('invalid_response') },
      then: { own: null },
      commands: failed('invalid_response'),
    },
    {
      title: 'a resume carries no message id: never sent twice',
      given: after(idle(suspended), resume(1), opened(true)),
      when: cut,
      then: { own: null },
      commands: [
        { type: 'settle-submit', request: 1, result: { outcome: 'failed' } },
        { type: 'relay', message: { kind: 'posting', active: false } },
      ],
    },
    {
      title:
        'the second POST answered with a bare done: it was taken the first time; accepted, read',
      given: after({ ...postedTo(true), draft: 'Hi' }, cut, opened(true)),
      when: turnEvents(1, { type: 'done' } as TurnEvent),
      then: { own: null, draft: '', error: null, reads: { wanted: true } },
      commands: [
        {
          type: 'settle-submit',
          request: 1,
          result: { outcome: 'accepted', executionId: null },
        },
        { type: 'relay', message: { kind: 'posting', active: false } },
        { type: 'store-draft', draft: '' },
      ],
    },
  ])
})

describe('a message the server took into its own queue (message-queued) [R-QUEUE-SERVER-ACCEPT]', () => {
  const queued = turnEvents(1, { type: 'message-queued', queueId: '7', sessionId: key.threadId })
  const accepted = [
    {
      type: 'settle-submit',
      request: 1,
      result: { outcome: 'accepted', executionId: null, queueId: '7' },
    },
    { type: 'relay', message: { kind: 'posting', active: false } },
    { type: 'store-draft', draft: '' },
  ]
  const waiting = after({ ...posting(), draft: 'Hi' }, queued)

  table([
    {
      title: 'is accepted: submit() resolves with its queueId, the draft clears, no turn yet',
      given: { ...posting(), draft: 'Hi' },
      when: queued,
      then: {
        own: { token: 1, phase: 'queued', settled: true },
        draft: '',
        error: null,
        live: null,
      },
      commands: accepted,
      status: 'submitting',
    },
    {
      title: 'its turn begins on the same stream once the server takes it up',
      given: waiting,
      when: turnEvents(1, {
        type: 'execution-started',
        executionId: 'e1',
        sessionId: key.threadId,
      }),
      then: { own: { phase: 'streaming' }, live: { executionId: 'e1' } },
      // The turn, relayed to the other tabs (no second `submit()` outcome).
      commands: [{ type: 'relay', message: { kind: 'turn' } }],
      status: 'streaming',
    },
    {
      title: 'message-queued and execution-started in one chunk: accepted, then streaming',
      given: { ...posting(), draft: 'Hi' },
      when: turnEvents(
        1,
        { type: 'message-queued', queueId: '7', sessionId: key.threadId },
        { type: 'execution-started', executionId: 'e1', sessionId: key.threadId },
      ),
      then: { own: { phase: 'streaming' }, live: { executionId: 'e1' }, draft: '' },
      commands: [
        accepted[0],
        accepted[1],
        { type: 'relay', message: { kind: 'turn' } },
        { type: 'store-draft', draft: '' },
      ],
      status: 'streaming',
    },
    {
      title: 'removed from the server’s queue before its turn (an error event): said, nothing runs',
      given: waiting,
      when: turnEvents(1, {
        type: 'error',
        message: 'The queued message was removed before it was taken up.',
        errorCode: 'queue_item_removed',
      }),
      then: { own: null, error: { serverCode: 'queue_item_removed' }, reads: { wanted: true } },
    },
    {
      title:
        'its stream cut while it waits: accepted already, so no error; the record says the rest',
      given: waiting,
      when: { type: 'stream-ended', token: 1, end: { kind: 'cut', error: err('stream_cut') } },
      then: { own: null, error: null, cut: true, draft: '' },
    },
  ])

  it('has no acceptance deadline: a long wait in the server’s queue is not a failure', () => {
    expect(submitDueAt(posting(), engineConfig)).not.toBeNull()
    expect(submitDueAt(waiting, engineConfig)).toBeNull()
  })
})

describe('a draft whose page left right after Send keeps its message id across the reload [R-DRAFT-SENT-ID]', () => {
  const sentAs = messageIdOf(1)
  /** The reloaded page: its draft and the id it was sent with, from storage; push connected. */
  const reloaded = listened(true, { draft: 'Hi', draftSentAs: sentAs })
  const taken = snapshot([
    { ...userMessage('e1', 'Hi'), messageId: sentAs },
    ...finishedTurn('e1', 'Hi', 'Hello').slice(1),
  ])

  table([
    {
      title: 'sending the draft keeps its message id with it (stored beside it)',
      given: { ...idle(), draft: 'Hi' },
      when: submit(1),
      then: { draft: 'Hi', draftSentAs: sentAs },
      commands: [{ type: 'post' }, { type: 'relay' }, { type: 'store-draft', draft: 'Hi', sentAs }],
      status: 'submitting',
    },
    {
      title: 'a message sent that is not the draft keeps nothing',
      given: { ...idle(), draft: 'something else' },
      when: submit(1, 'Hi'),
      then: { draft: 'something else', draftSentAs: null },
      commands: [{ type: 'post' }, { type: 'relay' }],
    },
    {
      title:
        'after the reload, a record that holds that id: the message was taken, the draft clears',
      given: reloaded,
      when: readOf(taken)[1]!,
      then: { draft: '', draftSentAs: null },
      commands: [{ type: 'store-draft', draft: '', sentAs: null }],
    },
    {
      // Found by the queue model (seed 727162635): the reloaded tab sent another message first;
      // the read that showed the draft's id while that one posted left the draft in the composer.
      title:
        'after the reload, a record that holds that id while another message of this tab posts: the draft clears',
      given: after({ ...idle(), draft: 'Hi', draftSentAs: sentAs }, submit(2, 'Other'), {
        type: 'read-started',
        at: 3,
        fetch: 2,
      }),
      when: snapshotAction(taken, 'read', { at: 3, stampedAt: 3, random: 0 }),
      then: { draft: '', draftSentAs: null, own: { token: 2, phase: 'posting' } },
      commands: [{ type: 'store-draft', draft: '', sentAs: null }],
    },
    {
      // Found by the queue model (seed 192408388): the reloaded tab sent the draft again (the same
      // id); the read that showed the first POST taken while the second posted left the draft in
      // the composer, to be sent a third time once that POST was refused as busy.
      title:
        'after the reload, a record that holds that id while the draft itself is sent again: the draft clears',
      given: after({ ...idle(), draft: 'Hi', draftSentAs: sentAs }, submit(2), {
        type: 'read-started',
        at: 3,
        fetch: 2,
      }),
      when: snapshotAction(taken, 'read', { at: 3, stampedAt: 3, random: 0 }),
      then: { draft: '', draftSentAs: null, own: { token: 2, phase: 'posting' } },
      commands: [{ type: 'store-draft', draft: '', sentAs: null }],
    },
    {
      title: 'a record without it: it never reached the server, the draft stays (and its id)',
      given: reloaded,
      when: readOf(snapshot(finishedTurn('e0', 'Before', 'An answer')))[1]!,
      then: { draft: 'Hi', draftSentAs: sentAs },
    },
    {
      title: 'the person edits the draft: it is no longer that message',
      given: reloaded,
      when: { type: 'draft-changed', draft: 'Hi there' },
      then: { draft: 'Hi there', draftSentAs: null },
      commands: [{ type: 'store-draft', draft: 'Hi there', sentAs: null }],
    },
  ])

  it('refused for sure (turn_already_running), the id is forgotten; with no answer (it may have been taken), kept for the record', () => {
    const posted = after({ ...idle(), draft: 'Hi' }, submit(1))
    const busy = turnEvents(1, {
      type: 'error',
      message: 'Busy.',
      errorCode: 'turn_already_running',
    })
    const refused = reduce(posted, busy, engineConfig)
    expect(refused.state).toMatchObject({ draft: 'Hi', draftSentAs: null })
    expect(refused.commands).toContainEqual({ type: 'store-draft', draft: 'Hi', sentAs: null })
    const lost = after(posted, { type: 'post-failed', token: 1, error: err('network_error') })
    expect(lost).toMatchObject({ draft: 'Hi', draftSentAs: sentAs })
  })

  // Found by the queue model once its tabs typed and sent drafts (issue 35): a draft whose POST was
  // lost was sent again under a new id, so the record's copy of the first could not clear it (and
  // the server could not dedupe the two); and a refusal of the second forgot the id of the first.
  it('sent again while its fate is not known: the same message, under the same id; a refusal of that POST keeps the id', () => {
    const posted = after({ ...idle(), draft: 'Hi' }, submit(1))
    // Lost (no answer), and a read that does not show it yet: the thread is free.
    const lost = after(
      posted,
      { type: 'post-failed', token: 1, error: err('network_error') },
      ...readOf(snapshot([])),
    )
    expect(sessionStatus(lost)).toBe('idle')
    const again = reduce(lost, submit(2), engineConfig)
    const post = again.commands.find((c) => c.type === 'post')
    expect(post?.type === 'post' && post.request.body).toMatchObject({ messageId: sentAs })
    expect(again.state).toMatchObject({ draft: 'Hi', draftSentAs: sentAs })
    const refused = after(
      again.state,
      turnEvents(2, { type: 'error', message: 'Busy.', errorCode: 'turn_already_running' }),
    )
    // The first POST may still have been taken: a read that shows it clears the draft.
    expect(refused).toMatchObject({ draft: 'Hi', draftSentAs: sentAs })
    // A message sent that is not the draft goes under its own id.
    const other = reduce(lost, submit(3, 'Other'), engineConfig)
    const otherPost = other.commands.find((c) => c.type === 'post')
    expect(otherPost?.type === 'post' && otherPost.request.body).toMatchObject({
      messageId: messageIdOf(3),
    })
  })

  it('accepted as usual, the draft clears and its id goes with it', () => {
    const posted = after({ ...idle(), draft: 'Hi' }, submit(1))
    const accepted = reduce(posted, turnStarted(1, 'e1'), engineConfig)
    expect(accepted.state).toMatchObject({ draft: '', draftSentAs: null })
    expect(accepted.commands).toContainEqual({ type: 'store-draft', draft: '', sentAs: null })
  })
})

describe('a read on its way answers after a relayed turn under a stand-in id replaced another (n8n) [R-N8N-STAND-IN-SET-ASIDE]', () => {
  // Found by the engine model (seeds 763449186 and 1246050543): three tabs of one user on the
  // released n8n; B and C send at once, this tab follows both over the relay, and a read it had on
  // its way answers after C's turn replaced B's. B's turn, set aside under its stand-in id, was
  // matched to the record by that id only: the record's copy and the stand-in's both showed.
  const n8n = (...messages: Message[]): HistorySnapshot => ({
    ...snapshot(messages),
    derived: true,
  })
  const relayTurn = (tab: string, executionId: string, text: string, after: string[]) =>
    relayFrom(tab, {
      kind: 'turn',
      turn: startTurn({ executionId, sessionId: key.threadId, message: text, createdAt: 'now' }),
      seq: 0,
      after,
    })
  const relayBatch = (tab: string, executionId: string, delta: string) =>
    relayFrom(tab, {
      kind: 'events',
      executionId,
      seq: 1,
      events: [{ type: 'text-delta', id: 't', delta }],
    })
  /** This tab follows B's "From B" (one batch), then C's "From C"; the read started before both. */
  const followingBoth = (
    before: Message[] = finishedTurn('e0', 'Before', 'An answer'),
    b = 'From B',
  ) =>
    after(
      reading(idle(n8n(...before))),
      relayTurn('B', 'unannounced:12', b, ['e0']),
      relayBatch('B', 'unannounced:12', 'w0 '),
      relayTurn('C', 'unannounced:11', 'From C', ['e0']),
      relayBatch('C', 'unannounced:11', 'w0 '),
    )
  const fromC = [
    userMessage('e2', 'From C', 'running'),
    assistantMessage('e2', [{ type: 'text', text: 'w0 ' }], 'running'),
  ]
  const answered = (...messages: Message[]) => readOf(n8n(...messages), 20)[1]!
  /** The read answers with the record of B's turn as `fromB` has it, and of C's running. */
  const answeredWith = (...fromB: Message[]) =>
    answered(...finishedTurn('e0', 'Before', 'An answer'), ...fromB, ...fromC)
  const shownBefore = ['e0:user Before', 'e0:assistant An answer']

  it('the set-aside turn is on screen beside the live one before the read answers', () => {
    expect(transcript(followingBoth())).toEqual([
      ...shownBefore,
      'unannounced:12:user From B',
      'unannounced:12:assistant w0 ',
      'unannounced:11:user From C',
      'unannounced:11:assistant w0 ',
    ])
  })

  table([
    {
      title:
        'the record holds both turns: each message shows once, the set-aside turn as the record has it, its ending reported',
      given: followingBoth(),
      when: answeredWith(
        userMessage('e1', 'From B', 'cancelled'),
        assistantMessage('e1', [{ type: 'text', text: 'w0 w1 ' }], 'cancelled'),
      ),
      then: { settled: [], live: { executionId: 'e2' }, watching: ['e2'] },
      commands: [
        {
          type: 'turn-ended',
          ending: { executionId: 'e1', origin: 'followed', status: 'cancelled' },
        },
      ],
      shows: [
        ...shownBefore,
        'e1:user From B',
        'e1:assistant w0 w1 ',
        'e2:user From C',
        'e2:assistant w0 ',
      ],
      status: 'following',
    },
    {
      title:
        'the record holds the set-aside turn with no output yet: it takes the recorded id and stays in the record’s place, once',
      given: followingBoth(),
      when: answeredWith(userMessage('e1', 'From B', 'running')),
      then: { settled: [{ executionId: 'e1' }] },
      shows: [
        ...shownBefore,
        'e1:user From B',
        'e1:assistant w0 ',
        'e2:user From C',
        'e2:assistant w0 ',
      ],
    },
    {
      title:
        'a record that does not hold it yet leaves it as it is: shown once, by its stand-in id',
      given: followingBoth(),
      when: answeredWith(),
      then: {
        settled: [{ executionId: 'unannounced:12', after: ['e0'] }],
      },
      shows: [
        ...shownBefore,
        'e2:user From C',
        'e2:assistant w0 ',
        'unannounced:12:user From B',
        'unannounced:12:assistant w0 ',
      ],
    },
    {
      title:
        'an earlier turn with the same text, ended when it began, is not it: both messages show',
      given: followingBoth(finishedTurn('e0', 'yes', 'Done.'), 'yes'),
      when: answered(...finishedTurn('e0', 'yes', 'Done.'), ...fromC),
      then: { settled: [{ executionId: 'unannounced:12' }] },
      shows: [
        'e0:user yes',
        'e0:assistant Done.',
        'e2:user From C',
        'e2:assistant w0 ',
        'unannounced:12:user yes',
        'unannounced:12:assistant w0 ',
      ],
    },
    {
      title: 'with its own message recorded beside that earlier one, it is that one, once',
      given: followingBoth(finishedTurn('e0', 'yes', 'Done.'), 'yes'),
      when: answered(
        ...finishedTurn('e0', 'yes', 'Done.'),
        userMessage('e1', 'yes', 'cancelled'),
        assistantMessage('e1', [{ type: 'text', text: 'w0 ' }], 'cancelled'),
        ...fromC,
      ),
      then: { settled: [] },
      commands: [{ type: 'turn-ended', ending: { executionId: 'e1' } }],
      shows: [
        'e0:user yes',
        'e0:assistant Done.',
        'e1:user yes',
        'e1:assistant w0 ',
        'e2:user From C',
        'e2:assistant w0 ',
      ],
    },
  ])
})

describe('a turn followed under a stand-in id, relayed again by its tab under its execution id (n8n) [R-N8N-STAND-IN-RELAY]', () => {
  // Found by the engine model (seed 727162635): this tab followed B's turn under its stand-in id,
  // missed a batch B relayed after its read named the turn, and asked B for the whole turn. B's
  // answer, the same turn under that id, set the followed one aside as another turn: the message
  // showed twice, the older copy with less of the answer.
  const n8n = (...messages: Message[]): HistorySnapshot => ({
    ...snapshot(messages),
    derived: true,
  })
  /** A turn as a tab relays it, with `answer` streamed so far. */
  const turnOf = (executionId: string, text: string, answer = '') =>
    applyTurnEvents(
      startTurn({ executionId, sessionId: key.threadId, message: text, createdAt: 'now' }),
      answer ? [{ type: 'text-delta', id: 't', delta: answer }] : [],
      { delegationCharLimit: 4000, now: () => 'now' },
    )
  const relayTurn = (tab: string, turn: ReturnType<typeof startTurn>, seq: number) =>
    relayFrom(tab, { kind: 'turn', turn, seq, after: ['e0'] })
  /** This tab follows B's "From B" under its stand-in id, one batch in (`ended`: its `done` too). */
  const followingB = (ended = false) =>
    after(
      idle(n8n(...finishedTurn('e0', 'Before', 'An answer'))),
      relayTurn('B', turnOf('unannounced:12', 'From B'), 0),
      relayFrom('B', {
        kind: 'events',
        executionId: 'unannounced:12',
        seq: 1,
        events: [
          { type: 'text-delta', id: 't', delta: 'w0 ' },
          ...(ended ? [{ type: 'done', executionId: 'unannounced:12' }] : []),
        ],
      }),
    )
  const shownBefore = ['e0:user Before', 'e0:assistant An answer']

  table([
    {
      title:
        'B relays it under the id it learned: the same turn, renamed in place, shown once with the whole answer',
      given: followingB(),
      when: relayTurn('B', turnOf('e1', 'From B', 'w0 w1 w2 '), 3),
      then: {
        settled: [],
        live: { executionId: 'e1', ended: false },
        relay: { following: { tab: 'B', executionId: 'e1', seq: 3 } },
        watching: ['e1'],
        origins: { e1: 'followed' },
      },
      shows: [...shownBefore, 'e1:user From B', 'e1:assistant w0 w1 w2 '],
      status: 'following',
    },
    {
      title:
        'another tab’s turn with the same text is another message: the followed one is set aside, both show',
      given: followingB(),
      when: relayTurn('C', turnOf('e1', 'From B', 'w0 '), 1),
      then: { settled: [{ executionId: 'unannounced:12' }], live: { executionId: 'e1' } },
      shows: [
        ...shownBefore,
        'unannounced:12:user From B',
        'unannounced:12:assistant w0 ',
        'e1:user From B',
        'e1:assistant w0 ',
      ],
    },
    {
      title:
        'a turn B relays after the followed one ended here is B’s next message, whatever its text: both show',
      given: followingB(true),
      when: relayTurn('B', turnOf('e2', 'From B', 'w0 '), 1),
      then: { live: { executionId: 'e2' } },
      shows: [
        ...shownBefore,
        'unannounced:12:user From B',
        'unannounced:12:assistant w0 ',
        'e2:user From B',
        'e2:assistant w0 ',
      ],
    },
  ])
})
