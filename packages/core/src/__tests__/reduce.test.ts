/**
 * The reducer's rules, one handler at a time: a state, an action, and the state and commands that
 * follow. Read a row as "given …, when …, then …". The last rows of each block are the cases the
 * model-based suite (engine.model.test.ts) found, kept as fixed examples.
 */
import { describe, expect, it } from 'vitest'
import type { TurnEvent } from '../wire/contract/events'
import type { Command, EngineAction, EngineState } from '../engine/model'
import { initialEngineState, reduce } from '../engine/reduce'
import { sessionStatus } from '../engine/derive'
import { startTurn, type LiveTurn } from '../engine/fold'
import { selectSessionState } from '../engine/select'
import { relayOf } from '../engine/slices/relay'
import { PreviewChatError, type ErrorRecord } from '../wire/contract/errors'
import { finishedTurn, key, runningTurn, snapshot, engineConfig, messageIdOf } from './harness'

const config = engineConfig
const thread = JSON.stringify([key.projectId, key.agentId, key.threadId])

/** An active session that has read an empty thread: the gate is open. */
function idle(patch: Partial<EngineState> = {}): EngineState {
  let state = initialEngineState({ key, tab: 'A' })
  for (const action of [
    { type: 'activated', at: 0, pushConnected: true },
    { type: 'read-started', at: 0, fetch: 1 },
    {
      type: 'snapshot',
      snapshot: snapshot([]),
      fresh: true,
      fromRead: true,
      at: 1,
      stampedAt: 1,
      random: 0,
    },
  ] as EngineAction[])
    state = reduce(state, action, config).state
  return { ...state, ...patch }
}

/**
 * Runs the actions in order; the last step's state, and every command on the way but the alarm's
 * (`set-alarm`, the runner's: its own tests are in runner.test.ts and schedule.test.ts).
 */
function run(state: EngineState, ...actions: EngineAction[]) {
  const commands: Command[] = []
  for (const action of actions) {
    const step = reduce(state, action, config)
    state = step.state
    commands.push(...step.commands.filter((command) => command.type !== 'set-alarm'))
  }
  return { state, commands, status: sessionStatus(state) }
}

const types = (commands: Command[]) => commands.map((c) => c.type)
const events = (token: number, ...list: TurnEvent[]): EngineAction => ({
  type: 'turn-events',
  token,
  events: list,
  at: 10,
  stampedAt: 10,
})
const relayed = (body: Record<string, unknown>, tab = 'B'): EngineAction => ({
  type: 'relay-received',
  data: { v: 1, tab, thread, ...body },
  at: 5,
  stampedAt: 5,
})
const submit = (request = 1, ...text: [string?]): EngineAction => ({
  type: 'submit-requested',
  request,
  messageId: messageIdOf(request),
  text: text.length === 0 ? 'Hi' : text[0],
  at: 2,
})
const started = (executionId = 'e1'): TurnEvent => ({
  type: 'execution-started',
  executionId,
  sessionId: key.threadId,
})
const read = (shown = snapshot([]), at = 20): EngineAction[] => [
  { type: 'read-started', at, fetch: 1 },
  { type: 'snapshot', snapshot: shown, fresh: true, fromRead: true, at, stampedAt: at, random: 0 },
]
const liveTurn = (executionId: string, text: string): LiveTurn =>
  startTurn({ executionId, sessionId: key.threadId, message: text, createdAt: 'now' })

describe('ownTurn: the gate and the first events of this tab’s turn', () => {
  it('submit with the gate open posts the text and tells the other tabs it is posting', () => {
    const { state, commands } = run(idle(), submit(1, 'Hi'))
    expect(commands).toEqual([
      {
        type: 'post',
        token: 1,
        request: {
          kind: 'message',
          body: { message: 'Hi', sessionId: 't1', newSession: true, messageId: messageIdOf(1) },
        },
      },
      { type: 'relay', message: { v: 1, tab: 'A', thread, kind: 'posting', active: true } },
    ])
    expect(sessionStatus(state)).toBe('submitting')
  })

  it('submit without text sends the draft; with the gate shut it is busy and sends nothing', () => {
    expect(run(idle({ draft: 'Draft' }), submit(1, undefined)).commands[0]).toMatchObject({
      request: { body: { message: 'Draft' } },
    })
    const busy = run(idle(), submit(1), submit(2))
    expect(busy.commands.at(-1)).toEqual({
      type: 'settle-submit',
      request: 2,
      result: { outcome: 'busy' },
    })
  })

  it('a blank message is refused with invalid_request before anything is sent', () => {
    const { commands } = run(idle(), submit(1, '  '))
    expect(commands).toMatchObject([
      { type: 'settle-submit', result: { outcome: 'failed', error: { code: 'invalid_request' } } },
    ])
  })

  it('an error as the first event is a refusal: failed, not taken up, a read', () => {
    const { state, commands } = run(
      idle(),
      submit(),
      events(1, { type: 'error', message: 'Busy.', errorCode: 'turn_already_running' }),
    )
    expect(types(commands)).toEqual(['post', 'relay', 'settle-submit', 'relay'])
    expect(commands.at(-1)).toMatchObject({ message: { kind: 'posting', active: false } })
    expect(state).toMatchObject({
      own: null,
      reads: { wanted: true },
      error: { code: 'turn_already_running' },
    })
  })

  it('execution-started accepts the turn, clears its draft and relays the turn as batch 0', () => {
    const { state, commands } = run(
      idle({ draft: 'Hi' }),
      submit(1, undefined),
      events(1, started()),
    )
    // (After the POST, its relay, and the draft's message id kept beside it.)
    expect(commands.slice(3)).toMatchObject([
      { type: 'settle-submit', result: { outcome: 'accepted', executionId: 'e1' } },
      { type: 'relay', message: { kind: 'turn', seq: 0, turn: { executionId: 'e1' } } },
      { type: 'store-draft', draft: '' },
    ])
    expect(sessionStatus(state)).toBe('streaming')
  })

  it('a first event other than execution-started is a turn the server did not announce (n8n)', () => {
    const { state, commands } = run(
      idle(),
      submit(),
      events(1, { type: 'text-delta', id: 't', delta: 'A' }),
    )
    expect(types(commands)).toEqual(['post', 'relay', 'warn', 'settle-submit', 'relay', 'relay'])
    expect(commands.at(-1)).toMatchObject({ message: { kind: 'events', seq: 1 } })
    expect(state.live?.executionId).toBe('unannounced:1')
    expect(state.server).toEqual({
      keepsTurnOnDisconnect: false,
      stopsByExecutionId: false,
    })
  })

  it('no acceptance within submitTimeoutMs: failed with timeout, not taken up, the stream left open', () => {
    const { state, commands } = run(idle(), submit(), { type: 'tick', at: 30_002 })
    // The record decides: the same tick starts the read (its time has come).
    // The relay part tells the other tabs after the step's own commands.
    expect(types(commands)).toEqual(['post', 'relay', 'settle-submit', 'read', 'relay'])
    expect(state).toMatchObject({ own: { timedOut: true }, streams: [1], cut: true })
  })
})

describe('stop: which way a Stop goes, and who it answers', () => {
  const streaming = () => run(idle(), submit(), events(1, started('e1'))).state

  it('names the execution this tab shows running', () => {
    const { commands } = run(streaming(), { type: 'stop-requested', request: 9, at: 20 })
    expect(commands).toEqual([{ type: 'stop-execution', executionId: 'e1' }])
  })

  it('a second Stop joins the first: one request, one outcome for both calls', () => {
    const { commands } = run(
      streaming(),
      { type: 'stop-requested', request: 8, at: 20 },
      { type: 'stop-requested', request: 9, at: 21 },
      { type: 'stop-answered', executionId: 'e1', cancelRequested: true },
    )
    expect(commands.filter((c) => c.type === 'stop-execution')).toHaveLength(1)
    expect(commands).toContainEqual({
      type: 'settle-stop',
      requests: [8, 9],
      result: { cancelRequested: true },
    })
  })

  it('a Stop pressed while the message is posted waits for that message’s execution', () => {
    const held = run(idle(), submit(), { type: 'stop-requested', request: 9, at: 3 })
    expect(held.state.stop).toMatchObject({ kind: 'held', token: 1 })
    expect(run(held.state, events(1, started('e7'))).commands).toContainEqual({
      type: 'stop-execution',
      executionId: 'e7',
    })
  })

  it('a held Stop whose message is refused is dropped; a later read naming a turn changes nothing', () => {
    const { state, commands } = run(
      idle(),
      submit(),
      { type: 'stop-requested', request: 9, at: 3 },
      { type: 'post-failed', token: 1, error: new PreviewChatError('conflict', 'busy') },
      ...read(runningTurn({ executionId: 'eX' })),
    )
    expect(types(commands)).not.toContain('stop-execution')
    expect(commands).toContainEqual({
      type: 'settle-stop',
      requests: [9],
      result: { cancelRequested: false },
    })
    expect(state.stop).toBeNull()
  })

  it('Retry-After: the same execution is asked again when the wait is over, up to three times', () => {
    const wait = new PreviewChatError('server_error', 'busy', { retryAfterMs: 1_000 })
    const { commands } = run(
      streaming(),
      { type: 'stop-requested', request: 9, at: 20 },
      { type: 'stop-failed', executionId: 'e1', error: wait, at: 30 },
      { type: 'tick', at: 1_030 },
    )
    expect(commands.filter((c) => c.type === 'stop-execution')).toHaveLength(2)
  })

  it('no Stop route (an HTML 404): the tab holding the stream closes it instead', () => {
    const page = new PreviewChatError('not_found', 'page', { routeMissing: true })
    const { state, commands } = run(
      streaming(),
      { type: 'stop-requested', request: 9, at: 20 },
      { type: 'stop-failed', executionId: 'e1', error: page, at: 30 },
    )
    expect(commands.slice(-2)).toEqual([
      { type: 'close-stream', token: 1 },
      { type: 'settle-stop', requests: [9], result: { cancelRequested: true } },
    ])
    expect(state.server.stopsByExecutionId).toBe(false)
  })

  it('found by the model: Stop by closing while a message is on its way names no ended turn', () => {
    const n8n = run(
      idle(),
      submit(1, 'First'),
      events(1, { type: 'text-delta', id: 't', delta: 'A' }),
      events(1, { type: 'done', executionId: 'e1' }),
      { type: 'stream-ended', token: 1, end: { kind: 'terminal' } },
      submit(2, 'Second'),
      { type: 'stop-requested', request: 9, at: 30 },
    )
    expect(n8n.commands.slice(-2)).toEqual([
      { type: 'close-stream', token: 2 },
      { type: 'settle-stop', requests: [9], result: { cancelRequested: true } },
    ])
    expect(n8n.state.live?.assistant.executionStatus).toBe('running') // e1 waits for its record
  })
})

describe('snapshot: what a record settles', () => {
  it('found by the model: a turn ended by done shows running until the record says how it ended', () => {
    const ended = run(
      idle(),
      submit(),
      events(1, started('e1'), { type: 'text-delta', id: 't', delta: 'Part' }, { type: 'done' }),
    )
    const shown = () => selectSessionState(ended.state).messages.at(-1)?.executionStatus
    expect(shown()).toBe('running')
    // Another tab's Stop cancelled it: the record says so, and the live view gives way.
    const cancelled = snapshot(
      finishedTurn('e1', 'Hi', 'Part').map((m) => ({
        ...m,
        executionStatus: 'cancelled' as const,
      })),
    )
    expect(
      selectSessionState(run(ended.state, ...read(cancelled)).state).messages.at(-1),
    ).toMatchObject({
      executionStatus: 'cancelled',
    })
  })

  it('a read started after execution-started that names no active execution ends that turn', () => {
    const cut = run(
      idle(),
      submit(),
      events(1, started('e2')),
      {
        type: 'stream-ended',
        token: 1,
        end: { kind: 'cut', error: new PreviewChatError('stream_cut', 'cut') },
      },
      ...read(snapshot([])),
    )
    expect(cut.status).toBe('idle')
    expect(cut.state.live).toBeNull()
  })

  it('a running turn the record overtook (a stalled stream) is shown from the record', () => {
    const { state } = run(
      idle(),
      submit(),
      events(1, started('e1'), { type: 'text-delta', id: 't', delta: 'Pa' }),
      ...read(runningTurn({ question: 'Hi', text: 'Part of it' })),
    )
    expect(state.own).not.toBeNull()
    expect(selectSessionState(state).messages.at(-1)?.content).toEqual([
      { type: 'text', text: 'Part of it' },
    ])
  })
})

describe('relay: what the other tabs say, parsed', () => {
  it('holds per tab: B’s "not taken up" ends B’s hold only', () => {
    const { state, status } = run(
      idle(),
      relayed({ kind: 'posting', active: true }, 'B'),
      relayed({ kind: 'posting', active: true }, 'C'),
      relayed({ kind: 'posting', active: false }, 'B'),
    )
    expect(Object.keys(relayOf(state).holds)).toEqual(['C'])
    expect(status).toBe('following')
  })

  it('a turn relayed by a tab ends its hold even while this tab posts too', () => {
    const { state } = run(
      idle(),
      submit(),
      relayed({ kind: 'posting', active: true }, 'B'),
      relayed({ kind: 'turn', turn: liveTurn('eB', 'From B'), seq: 0 }, 'B'),
    )
    expect(relayOf(state).holds).toEqual({})
    expect(state.live).toBeNull() // this tab's own stream wins
  })

  it('a hold ends by itself after submitTimeoutMs, with a read', () => {
    const { state, status, commands } = run(idle(), relayed({ kind: 'posting', active: true }), {
      type: 'tick',
      at: 30_005,
    })
    expect(relayOf(state).holds).toEqual({})
    expect(commands).toContainEqual({ type: 'read' })
    expect(state.reads.inFlight).toBe(true)
    expect(status).toBe('idle')
  })

  it('junk, another version or another thread changes nothing; junk is reported', () => {
    const before = idle()
    for (const data of [null, 'x', { v: 2, kind: 'posting', active: true }, { kind: 'turn' }]) {
      const step = reduce(before, { type: 'relay-received', data, at: 5, stampedAt: 5 }, config)
      expect(step.state).toBe(before)
      expect(types(step.commands)).toEqual(['warn'])
    }
    const elsewhere = { v: 1, tab: 'B', thread: '["p1","a1","t9"]', kind: 'posting', active: true }
    expect(
      reduce(before, { type: 'relay-received', data: elsewhere, at: 5, stampedAt: 5 }, config),
    ).toEqual({
      state: before,
      commands: [],
    })
  })

  it('found by the queue tests: a relayed turn that ends is read from the record when no push says so [R-RECOVER-FOLLOW-RECORDED]', () => {
    const follow = (pushConnected: boolean) =>
      run(
        idle({ push: { connected: pushConnected, lost: false } }),
        relayed({ kind: 'turn', turn: liveTurn('eB', 'From B'), seq: 0 }),
        relayed({
          kind: 'events',
          executionId: 'eB',
          seq: 1,
          events: [{ type: 'done', executionId: 'eB' }],
        }),
      ).state
    const withoutPush = follow(false)
    expect(withoutPush.live?.ended).toBe(true)
    expect(withoutPush.reads.wanted).toBe(true)
    // With push, the server's notification of the ending asks for that read: none twice.
    expect(follow(true).reads.wanted).toBe(false)
  })

  it('a batch that does not follow the last one asks the streaming tab for the whole turn, once', () => {
    const { commands } = run(
      idle(),
      relayed({ kind: 'events', executionId: 'eB', seq: 4, events: [] }),
      relayed({ kind: 'events', executionId: 'eB', seq: 5, events: [] }),
    )
    expect(commands).toEqual([
      { type: 'relay', message: { v: 1, tab: 'A', thread, kind: 'sync', executionId: 'eB' } },
    ])
  })

  it('found by the model: a relayed stand-in turn takes the id the record gives it (n8n)', () => {
    const recorded = snapshot([
      { ...runningTurn({ executionId: 'n1', question: 'From B' }).messages[0]! },
    ])
    const { state } = run(
      idle(),
      ...read(recorded),
      relayed({ kind: 'turn', turn: liveTurn('unannounced:3', 'From B'), seq: 0 }),
    )
    expect(state.live?.executionId).toBe('n1')
    expect(selectSessionState(state).messages.filter((m) => m.role === 'user')).toHaveLength(1)
  })

  it('found by the model: a turn this tab lost track of stays on screen when another tab’s arrives', () => {
    const { state } = run(
      idle(),
      submit(1, 'Mine'),
      events(1, started('e1')),
      {
        type: 'stream-ended',
        token: 1,
        end: { kind: 'cut', error: new PreviewChatError('stream_cut', 'cut') },
      },
      relayed({ kind: 'turn', turn: liveTurn('e2', 'Theirs'), seq: 0 }),
    )
    const users = selectSessionState(state).messages.filter((m) => m.role === 'user')
    expect(users.map((m) => m.content[0])).toEqual([
      { type: 'text', text: 'Mine' },
      { type: 'text', text: 'Theirs' },
    ])
  })
})

describe('lifecycle: quiet and disposed', () => {
  it('dispose settles what waits, closes every stream and aborts the Stop in flight', () => {
    const { commands } = run(
      idle(),
      submit(),
      events(1, started('e1')),
      { type: 'stop-requested', request: 9, at: 20 },
      { type: 'disposed' },
    )
    expect(commands.slice(-3)).toEqual([
      { type: 'settle-stop', requests: [9], result: { cancelRequested: false } },
      { type: 'close-stream', token: 1 },
      { type: 'abort-stop' },
    ])
  })

  it('after dispose, a call is answered at once and nothing else happens', () => {
    const disposed = run(idle(), { type: 'disposed' }).state
    expect(run(disposed, submit(4)).commands).toEqual([
      { type: 'settle-submit', request: 4, result: { outcome: 'busy' } },
    ])
    expect(run(disposed, ...read()).state).toBe(disposed)
  })

  it('prefetch: a read before anything subscribes, none while the session is listened to or disposed [R-READ-PREFETCH]', () => {
    const fresh = initialEngineState({ key, tab: 'A' })
    const prefetch: EngineAction = { type: 'prefetch-requested', at: 3 }
    expect(run(fresh, prefetch).commands).toEqual([{ type: 'read' }])
    expect(run(fresh, prefetch).state.reads).toMatchObject({ inFlight: true, lastStartedAt: 3 })
    expect(run(fresh, prefetch, prefetch).commands).toEqual([{ type: 'read' }])
    expect(run(idle(), prefetch).commands).toEqual([])
    // A session gone quiet may be stale again: a route loader's prefetch reads it afresh.
    const quiet = run(idle(), { type: 'deactivated' }).state
    expect(run(quiet, prefetch).commands).toEqual([{ type: 'read' }])
    expect(run(fresh, { type: 'disposed' }, prefetch).commands).toEqual([])
  })

  it('push: only this thread’s notifications want a read', () => {
    const other = {
      type: 'agentExecutionUpdated' as const,
      data: { ...key, threadId: 't9', executionId: 'e' },
    }
    const mine = { type: 'agentExecutionUpdated' as const, data: { ...key, executionId: 'e' } }
    expect(run(idle(), { type: 'push-message', message: other }).state.reads.wanted).toBe(false)
    expect(run(idle(), { type: 'push-message', message: mine }).state.reads.wanted).toBe(true)
  })
})

describe('select: the view a subscriber compares by reference', () => {
  it('keeps the view, and the error it shows, while nothing it shows changes [R-READ-IDENTITY]', () => {
    const down: ErrorRecord = { code: 'network_error', message: 'The read failed.' }
    const failed = run(idle(), { type: 'read-failed', error: down, at: 5, random: 0.5 }).state
    const view = selectSessionState(failed)
    expect(view.readError).toBeInstanceOf(PreviewChatError)
    // A step that changes only the engine's bookkeeping (a read wanted, not started).
    const wanted = run(failed, { type: 'read-wanted', urgent: false }).state
    expect(wanted).not.toBe(failed)
    const again = selectSessionState(wanted, { engine: failed, view })
    expect(again).toBe(view)
    expect(again.readError).toBe(view.readError)
    // The same with an error of a submit: one error object for as long as the engine keeps it.
    const busy = (): ErrorRecord => ({ code: 'turn_already_running', message: 'Busy.' })
    const refused = { ...failed, error: busy() }
    const shown = selectSessionState(refused, { engine: failed, view })
    expect(shown.error).toBeInstanceOf(PreviewChatError)
    const bookkeeping = { ...refused, reads: { ...refused.reads, count: refused.reads.count + 1 } }
    const still = selectSessionState(bookkeeping, { engine: refused, view: shown })
    expect(still).toBe(shown)
    expect(still.error).toBe(shown.error)
    // Another error, even of the same code, is another object.
    const twice = { ...bookkeeping, error: busy() }
    expect(selectSessionState(twice, { engine: bookkeeping, view: still }).error).not.toBe(
      still.error,
    )
  })
})

describe('found in review, kept as fixed examples', () => {
  const stops = (commands: Command[]) => commands.filter((c) => c.type === 'settle-stop')

  it('a read that started before the turn does not clear an accepted Stop of it', () => {
    const accepted = run(
      idle(),
      { type: 'read-started', at: 2, fetch: 1 }, // a notification's read, in flight
      submit(),
      events(1, started('e1')),
      { type: 'stop-requested', request: 2, at: 11 },
      { type: 'stop-answered', executionId: 'e1', cancelRequested: true },
    )
    const stale = run(accepted.state, {
      type: 'snapshot',
      snapshot: snapshot([]),
      fresh: true,
      fromRead: true,
      at: 12,
      stampedAt: 12,
      random: 0,
    })
    expect(stale.status).toBe('stopping')
  })

  it('a held Stop, sent once its turn began, is not answered by a read from before the turn', () => {
    const { commands } = run(
      idle(),
      { type: 'read-started', at: 2, fetch: 1 },
      submit(),
      { type: 'stop-requested', request: 2, at: 4 },
      events(1, started('e1')),
      {
        type: 'snapshot',
        snapshot: snapshot([]),
        fresh: true,
        fromRead: true,
        at: 12,
        stampedAt: 12,
        random: 0,
      },
    )
    expect(stops(commands)).toEqual([])
  })

  it('a stand-in turn never takes the id of an earlier, ended turn with the same text (n8n)', () => {
    const earlier = { ...snapshot(finishedTurn('old', 'yes', 'Done.')), derived: true as const }
    const base = run(idle(), ...read(earlier)).state
    // Another tab's turn "yes": it holds the gate here.
    const relayedTurn = run(
      base,
      relayed({ kind: 'posting', active: true }),
      relayed({ kind: 'turn', turn: liveTurn('unannounced:1', 'yes'), seq: 0, after: ['old'] }),
    )
    expect(relayedTurn.status).toBe('following')
    // This tab's own turn "yes" survives a read that shows the earlier one.
    const own = run(
      base,
      submit(1, 'yes'),
      events(1, { type: 'text-delta', id: 't', delta: 'A' }),
      ...read(earlier, 6_000),
    )
    expect(own).toMatchObject({
      status: 'streaming',
      state: { live: { executionId: 'unannounced:1' } },
    })
  })
})
