/**
 * The engine across tabs, at reducer speed: three tabs (each its own engine state, its own clock
 * origin and a skewed wall clock), a model server (the spec's behaviour, or the released n8n
 * 2.41's), a relay between tabs that delays, drops, duplicates and carries junk, reads answered
 * in any order across tabs, push, Stops. No network, no timers: the commands the reducer returns
 * are performed by this file, and random interleavings of everything run by the thousand.
 *
 * After every step:
 * (i)   no Stop names an execution its tab did not target;
 * (ii)  while a tab's POST is unanswered, no other tab that got its posting has an open gate;
 * (iii) once no POST is unanswered and nothing runs, every gate opens within one read;
 * (iv)  the transcript never shrinks, never shows more text or another ending than the server
 *       has, and never hides the progress its own record shows;
 * (v)   nothing throws.
 */
import fc from 'fast-check'
import { describe, it } from 'vitest'
import { activeExecutionId, sessionStatus } from '../engine/derive'
import type { Command, EngineAction, EngineState } from '../engine/model'
import { initialEngineState, reduce } from '../engine/reduce'
import { nextDeadline, nextRead } from '../engine/schedule'
import { selectSessionState } from '../engine/select'
import type { TurnEvent } from '../wire/contract/events'
import { PreviewChatError } from '../wire/contract/errors'
import { errorFromResponse } from '../wire/contract/rest'
import { parseHistorySnapshot, type ExecutionStatus } from '../wire/contract/snapshot'
import { key, engineConfig } from './harness'
import { assertSeeded } from './seeded'

type Behaviour = 'spec' | 'n8n'

const config = engineConfig

interface Execution {
  id: string
  text: string
  tokens: string[]
  recorded: number
  status: ExecutionStatus
  /** The turn stream of the POST that began it, while open: its tab and token. */
  stream: { tab: number; token: number } | null
}

interface Tab {
  state: EngineState
  /** This tab's monotonic clock starts elsewhere; its wall clock is skewed. */
  origin: number
  skew: number
  readInFlight: boolean
  readStartedAt: number
  /** What the relay carries to this tab, in each sender's order (a posting with its POST's token). */
  inbox: { data: unknown; post?: number }[]
  /** Executions this tab showed as running when Stop was pressed, and messages it held a Stop for. */
  stopTargets: Set<string>
  heldTokens: Set<number>
  /** Tabs whose posting this tab got, with the POST token then unanswered. */
  gotPosting: Map<number, number>
  lastDropAt: number
  /** The longest text shown per user message, and the reads started since the world was quiet. */
  shown: Map<string, number>
  successfulReadsSinceQuiet: number
}

interface World {
  behaviour: Behaviour
  now: number
  tabs: Tab[]
  execs: Execution[]
  /** POSTs the server has not answered: tab, token, text. */
  posts: { tab: number; token: number; text: string; at: number }[]
  stops: { tab: number; executionId: string }[]
  /** Which execution each tab's POST token began. */
  begun: Map<string, string>
  requests: number
  quietSince: number | null
}

const tabId = (i: number) => `tab-${i}`

function newWorld(behaviour: Behaviour, skews: number[]): World {
  const tabs = skews.map((skew, i): Tab => ({
    state: initialEngineState({ key, tab: tabId(i) }),
    origin: i * 1_000_003,
    skew,
    readInFlight: false,
    readStartedAt: 0,
    inbox: [],
    stopTargets: new Set(),
    heldTokens: new Set(),
    gotPosting: new Map(),
    lastDropAt: Number.NEGATIVE_INFINITY,
    shown: new Map(),
    successfulReadsSinceQuiet: 0,
  }))
  const world: World = {
    behaviour,
    now: 0,
    tabs,
    execs: [],
    posts: [],
    stops: [],
    begun: new Map(),
    requests: 0,
    quietSince: null,
  }
  tabs.forEach((_, i) =>
    dispatch(world, i, { type: 'activated', at: at(world, i), pushConnected: true }),
  )
  return world
}

const at = (world: World, i: number) => world.now + world.tabs[i]!.origin
const stampedAt = (world: World, i: number) =>
  Date.parse('2026-12-01T10:00:00Z') + world.now + world.tabs[i]!.skew
const running = (world: World) => world.execs.filter((e) => e.status === 'running')

// --- the model server --------------------------------------------------------------------------

/** The history read's answer as the wire has it (n8n: derived fields left out, 404 before output). */
function historyBody(world: World): { status: number; body: unknown } {
  const n8n = world.behaviour === 'n8n'
  const messages: unknown[] = []
  for (const e of world.execs) {
    const hasOutput = e.recorded > 0 || e.status !== 'running'
    messages.push({
      id: `${e.id}:user`,
      role: 'user',
      content: [{ type: 'text', text: e.text }],
      executionId: e.id,
      ...(!n8n && { executionStatus: e.status }),
      createdAt: '2026-12-01T10:00:00.000Z',
    })
    if (n8n && !hasOutput) continue
    messages.push({
      id: `${e.id}:assistant`,
      role: 'assistant',
      content:
        e.recorded > 0 ? [{ type: 'text', text: e.tokens.slice(0, e.recorded).join('') }] : [],
      executionId: e.id,
      executionStatus: e.status,
      createdAt: '2026-12-01T10:00:00.000Z',
    })
  }
  if (n8n && !world.execs.some((e) => e.recorded > 0 || e.status !== 'running'))
    return { status: 404, body: { code: 404, message: 'Not found' } }
  const active = running(world).at(-1)?.id ?? null
  return {
    status: 200,
    body: { messages, openSuspensions: [], ...(!n8n && { activeExecutionId: active }) },
  }
}

function sendToStream(world: World, e: Execution, events: TurnEvent[]) {
  if (!e.stream) return
  const { tab, token } = e.stream
  dispatch(world, tab, {
    type: 'turn-events',
    token,
    events,
    at: at(world, tab),
    stampedAt: stampedAt(world, tab),
  })
}

function closeStream(world: World, e: Execution, kind: 'terminal' | 'cut') {
  if (!e.stream) return
  const { tab, token } = e.stream
  e.stream = null
  const end =
    kind === 'terminal'
      ? { kind: 'terminal' as const }
      : { kind: 'cut' as const, error: new PreviewChatError('stream_cut', 'cut') }
  dispatch(world, tab, { type: 'stream-ended', token, end })
}

function endExecution(world: World, e: Execution, status: ExecutionStatus) {
  e.status = status
  e.recorded = e.tokens.length
  sendToStream(world, e, [{ type: 'done', executionId: e.id }])
  closeStream(world, e, 'terminal')
  notify(world, e)
}

function notify(world: World, e: Execution) {
  const message = {
    type: 'agentExecutionUpdated' as const,
    data: { ...key, executionId: e.id },
  }
  world.tabs.forEach((_, i) => dispatch(world, i, { type: 'push-message', message }))
}

function answerPost(world: World, index: number, choice: number) {
  const post = world.posts.splice(index, 1)[0]
  if (!post) return
  const { tab, token, text } = post
  const spec = world.behaviour === 'spec'
  if (choice % 7 === 3)
    // Refused at once, whatever runs (a rate limit, a proxy).
    return dispatch(world, tab, {
      type: 'post-failed',
      token,
      error: errorFromResponse(429, { code: 429, message: 'Slow down' }, 'Sending the message'),
    })
  if (spec && running(world).length > 0) {
    // Refused in band (a second turn while one runs), or at once with HTTP 429.
    if (choice % 2 === 0)
      return dispatch(world, tab, {
        type: 'post-failed',
        token,
        error: errorFromResponse(429, { code: 429, message: 'Busy' }, 'Sending the message'),
      })
    dispatch(world, tab, {
      type: 'turn-events',
      token,
      events: [{ type: 'error', message: 'Busy.', errorCode: 'turn_already_running' }],
      at: at(world, tab),
      stampedAt: stampedAt(world, tab),
    })
    return dispatch(world, tab, { type: 'stream-ended', token, end: { kind: 'terminal' } })
  }
  const e: Execution = {
    id: `e${world.execs.length + 1}`,
    text,
    tokens: [],
    recorded: 0,
    status: 'running',
    stream: { tab, token },
  }
  world.execs.push(e)
  world.begun.set(`${tab}:${token}`, e.id)
  if (choice % 5 === 4) {
    // Taken, but the answer never arrives (a proxy cut it): on n8n that cancels the turn.
    e.stream = null
    if (!spec) e.status = 'cancelled'
    return dispatch(world, tab, {
      type: 'post-failed',
      token,
      error: new PreviewChatError('network_error', 'no answer'),
    })
  }
  if (spec) {
    sendToStream(world, e, [
      { type: 'execution-started', executionId: e.id, sessionId: key.threadId },
    ])
    notify(world, e)
  } else {
    // The released protocol: no execution-started; the first output is the first event.
    produce(world, e, true)
  }
}

function produce(world: World, e: Execution, record: boolean) {
  const token = `w${e.tokens.length} `
  e.tokens.push(token)
  if (record || world.behaviour === 'n8n') e.recorded = e.tokens.length
  sendToStream(world, e, [{ type: 'text-delta', id: 't', delta: token }])
  if (record) notify(world, e)
}

function answerStop(world: World, index: number) {
  const stop = world.stops.splice(index, 1)[0]
  if (!stop) return
  const { tab, executionId } = stop
  if (world.behaviour === 'n8n') {
    const error = errorFromResponse(404, '<html>Cannot DELETE</html>', 'Stop')
    return dispatch(world, tab, { type: 'stop-failed', executionId, error, at: at(world, tab) })
  }
  const e = world.execs.find((x) => x.id === executionId)
  const cancelRequested = e?.status === 'running'
  dispatch(world, tab, { type: 'stop-answered', executionId, cancelRequested })
  if (e && cancelRequested) endExecution(world, e, 'cancelled')
}

// --- the tabs' effects ----------------------------------------------------------------------------

function dispatch(world: World, i: number, action: EngineAction) {
  const tab = world.tabs[i]!
  const before = tab.state
  let result: ReturnType<typeof reduce>
  try {
    result = reduce(before, action, config)
  } catch (cause) {
    throw new Error(`(v) the reducer threw on ${action.type}: ${String(cause)}`)
  }
  tab.state = result.state
  if (action.type === 'stop-requested') {
    const active = activeExecutionId(before)
    if (active) tab.stopTargets.add(active)
    if (before.own?.phase === 'posting') tab.heldTokens.add(before.own.token)
  }
  for (const command of result.commands) perform(world, i, command)
}

function perform(world: World, i: number, command: Command) {
  const tab = world.tabs[i]!
  switch (command.type) {
    case 'post': {
      const text = command.request.kind === 'message' ? command.request.body.message : ''
      world.posts.push({ tab: i, token: command.token, text, at: world.now })
      return
    }
    case 'close-stream': {
      const e = world.execs.find((x) => x.stream?.tab === i && x.stream.token === command.token)
      if (!e) return
      e.stream = null
      // On the released n8n a closed POST cancels its turn.
      if (world.behaviour === 'n8n' && e.status === 'running') {
        e.status = 'cancelled'
        e.recorded = e.tokens.length
      }
      return dispatch(world, i, {
        type: 'stream-ended',
        token: command.token,
        end: { kind: 'aborted' },
      })
    }
    case 'stop-execution': {
      const { executionId } = command
      const held = [...tab.heldTokens].some((t) => world.begun.get(`${i}:${t}`) === executionId)
      if (!tab.stopTargets.has(executionId) && !held)
        throw new Error(`(i) tab ${i} sent Stop for ${executionId}, which it never targeted`)
      world.stops.push({ tab: i, executionId })
      return
    }
    case 'abort-stop':
      world.stops = world.stops.filter((s) => s.tab !== i)
      return
    case 'cancel-runs':
      throw new Error('no suspensions in this model')
    case 'cancel-read':
      tab.readInFlight = false
      return dispatch(world, i, { type: 'read-cancelled' })
    case 'relay': {
      const { message } = command
      const post = message.kind === 'posting' && message.active ? tab.state.own?.token : undefined
      world.tabs.forEach((other, j) => {
        if (j !== i)
          other.inbox.push({ data: structuredClone(message), ...(post !== undefined && { post }) })
      })
      return
    }
    case 'settle-submit':
    case 'settle-stop':
    case 'store-draft':
    case 'warn':
      return
  }
}

/** What each tab's session would do now: deadlines due, then a read due. */
function schedule(world: World) {
  for (let round = 0; round < 20; round++) {
    let acted = false
    world.tabs.forEach((tab, i) => {
      const now = at(world, i)
      const deadline = nextDeadline(tab.state, config)
      if (deadline !== null && deadline <= now) {
        dispatch(world, i, { type: 'tick', at: now })
        acted = true
      }
      const readAt = nextRead(tab.state, config)
      if (!tab.readInFlight && readAt !== null && readAt <= now) {
        tab.readInFlight = true
        tab.readStartedAt = world.now
        dispatch(world, i, { type: 'read-started', at: now })
        acted = true
      }
    })
    if (!acted) return
  }
}

function answerRead(world: World, i: number, fail: boolean) {
  const tab = world.tabs[i]!
  if (!tab.readInFlight) return
  tab.readInFlight = false
  const { status, body } = historyBody(world)
  if (fail || status !== 200) {
    const error = fail
      ? new PreviewChatError('server_error', 'failed')
      : errorFromResponse(status, body, 'The history read')
    return dispatch(world, i, { type: 'read-failed', error, at: at(world, i), random: 0.5 })
  }
  const parsed = parseHistorySnapshot(body)
  if (!parsed.success) throw parsed.error
  if (world.quietSince !== null && tab.readStartedAt >= world.quietSince)
    tab.successfulReadsSinceQuiet++
  dispatch(world, i, {
    type: 'snapshot',
    snapshot: parsed.value,
    fresh: true,
    fromRead: true,
    at: at(world, i),
    stampedAt: stampedAt(world, i),
    random: 0.5,
  })
}

const junk: unknown[] = [
  null,
  'hello',
  { thread: JSON.stringify([key.projectId, key.agentId, key.threadId]) },
  { kind: 'turn' },
  { v: 2, kind: 'posting', active: true },
  { v: 1, tab: 'x', thread: 'x', kind: 'events', executionId: 'e1', seq: 1, events: [{ type: 7 }] },
]

function deliver(world: World, i: number, mode: number) {
  const tab = world.tabs[i]!
  const item = tab.inbox.shift()
  if (item === undefined) return
  const { data } = item
  if (mode === 0) {
    tab.lastDropAt = world.now
    return
  }
  if (mode === 1) dispatch(world, i, relayAction(world, i, junk[world.now % junk.length]))
  dispatch(world, i, relayAction(world, i, data))
  // A duplicate arrives right behind the original (the channel keeps each sender's order).
  if (mode === 2) dispatch(world, i, relayAction(world, i, structuredClone(data)))
  const from = Number((data as { tab?: string }).tab?.slice(4))
  if (item.post !== undefined) tab.gotPosting.set(from, item.post)
}

const relayAction = (world: World, i: number, data: unknown): EngineAction => ({
  type: 'relay-received',
  data,
  at: at(world, i),
  stampedAt: stampedAt(world, i),
})

// --- the invariants ----------------------------------------------------------------------------

function shownTurns(state: EngineState) {
  const { messages } = selectSessionState(state)
  const turns: { text: string; answer: string; status: ExecutionStatus | undefined }[] = []
  messages.forEach((message, index) => {
    const first = message.content[0]
    if (message.role !== 'user' || first?.type !== 'text') return
    const next = messages[index + 1]
    const answer =
      next?.role === 'assistant' && next.executionId === message.executionId
        ? next.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
        : ''
    const status = next?.role === 'assistant' ? next.executionStatus : undefined
    turns.push({ text: first.text, answer, status })
  })
  return turns
}

/** No POST unanswered, nothing running, no stream or Stop open, the relay drained. */
const isQuiet = (world: World) =>
  world.posts.length === 0 &&
  running(world).length === 0 &&
  world.stops.length === 0 &&
  world.tabs.every((tab) => tab.inbox.length === 0 && tab.state.streams.length === 0)

function checkInvariants(world: World) {
  world.tabs.forEach((tab, i) => {
    // (ii) A posting tab's POST unanswered: the tabs it reached keep their gate shut.
    for (const [from, token] of tab.gotPosting) {
      const post = world.posts.find((p) => p.tab === from && p.token === token)
      if (!post) {
        tab.gotPosting.delete(from)
        continue
      }
      if (world.now < post.at + config.submitTimeoutMs && sessionStatus(tab.state) === 'idle')
        throw new Error(`(ii) tab ${i} is idle while tab ${from}'s POST is unanswered`)
    }
    // (iv) The transcript.
    const recorded = tab.state.recorded
    for (const turn of shownTurns(tab.state)) {
      const e = world.execs.find((x) => x.text === turn.text)
      if (!e) throw new Error(`(iv) tab ${i} shows "${turn.text}", which the server never took`)
      const truth = e.tokens.join('')
      if (!truth.startsWith(turn.answer))
        throw new Error(
          `(iv) tab ${i} shows "${turn.answer}" for "${turn.text}"; the server has "${truth}"`,
        )
      const best = tab.shown.get(turn.text) ?? 0
      if (turn.answer.length < best)
        throw new Error(
          `(iv) tab ${i}: the answer to "${turn.text}" shrank from ${best} to ${turn.answer.length}`,
        )
      tab.shown.set(turn.text, turn.answer.length)
      if (turn.status && turn.status !== 'running' && turn.status !== e.status)
        throw new Error(
          `(iv) tab ${i} shows "${turn.text}" ${turn.status}; the server says ${e.status}`,
        )
      const inRecord = recorded?.messages.find((m) => m.id === `${e.id}:assistant`)
      const recordedText =
        inRecord?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? ''
      if (turn.answer.length < recordedText.length)
        throw new Error(`(iv) tab ${i} hides recorded progress of "${turn.text}"`)
    }
    for (const text of tab.shown.keys())
      if (!shownTurns(tab.state).some((turn) => turn.text === text))
        throw new Error(`(iv) tab ${i} no longer shows "${text}"`)
  })
  // (iii) Quiet: no POST unanswered, nothing running, no stream or Stop open, the relay drained.
  if (!isQuiet(world)) {
    world.quietSince = null
    world.tabs.forEach((tab) => (tab.successfulReadsSinceQuiet = 0))
    return
  }
  world.quietSince ??= world.now
  world.tabs.forEach((tab, i) => {
    // A dropped "not taken up" leaves a hold until submitTimeoutMs: the documented cost.
    if (world.now < tab.lastDropAt + config.submitTimeoutMs + 1) return
    if (tab.successfulReadsSinceQuiet > 0 && sessionStatus(tab.state) !== 'idle')
      throw new Error(
        `(iii) tab ${i} is ${sessionStatus(tab.state)} after a read of a quiet thread: ${JSON.stringify({ ...tab.state, recorded: undefined })}`,
      )
  })
}

// --- the moves ----------------------------------------------------------------------------------

interface Move {
  op: number
  a: number
  b: number
}

/** The moves possible now; `op` picks one, `a` and `b` its details. */
function enabledMoves(world: World, { a, b }: Move): [string, () => void][] {
  const moves: [string, () => void][] = []
  const n = world.tabs.length
  const tabIndex = a % n
  moves.push([
    `tab ${tabIndex} submits`,
    () =>
      dispatch(world, tabIndex, {
        type: 'submit-requested',
        request: ++world.requests,
        text: `m${world.requests}`,
        at: at(world, tabIndex),
      }),
  ])
  moves.push([
    `tab ${tabIndex} stops`,
    () =>
      dispatch(world, tabIndex, {
        type: 'stop-requested',
        request: ++world.requests,
        at: at(world, tabIndex),
      }),
  ])
  world.tabs.forEach((tab, i) => {
    if (tab.inbox.length > 0)
      moves.push(
        [`relay to tab ${i} (mode ${b % 8})`, () => deliver(world, i, b % 8)],
        [`relay to tab ${i}`, () => deliver(world, i, 3)],
      )
    if (tab.readInFlight)
      moves.push([
        `read of tab ${i} answered (fail: ${b % 6 === 0})`,
        () => answerRead(world, i, b % 6 === 0),
      ])
  })
  world.posts.forEach((post, index) =>
    moves.push([`POST of tab ${post.tab} answered (${b})`, () => answerPost(world, index, b)]),
  )
  world.stops.forEach((stop, index) =>
    moves.push([
      `Stop of tab ${stop.tab} for ${stop.executionId} answered`,
      () => answerStop(world, index),
    ]),
  )
  for (const e of running(world)) {
    moves.push(
      [`${e.id} produces`, () => produce(world, e, b % 3 === 0)],
      [`${e.id} produces, recorded`, () => produce(world, e, true)],
    )
    moves.push([`${e.id} ends`, () => endExecution(world, e, 'success')])
  }
  for (const e of world.execs.filter((x) => x.stream))
    moves.push([
      `the stream of ${e.id} is cut`,
      () => {
        if (world.behaviour === 'n8n' && e.status === 'running') {
          e.status = 'interrupted'
          e.recorded = e.tokens.length
        }
        closeStream(world, e, 'cut')
      },
    ])
  const dt = [10, 300, 6_000, 31_000, 130_000][b % 5]!
  moves.push([`${dt} ms pass`, () => (world.now += dt)])
  return moves
}

function play(world: World, move: Move, trace: string[]) {
  const moves = enabledMoves(world, move)
  const [label, run] = moves[move.op % moves.length]!
  trace.push(`${world.now} ms: ${label}`)
  run()
  schedule(world)
  checkInvariants(world)
}

/** Ends everything, lets every hold expire, reads once in each tab: every gate must be open. */
function drain(world: World) {
  for (let round = 0; round < 200 && !isQuiet(world); round++) {
    for (const tab of world.tabs.keys())
      while (world.tabs[tab]!.inbox.length > 0) deliver(world, tab, 3)
    if (world.posts.length > 0) answerPost(world, 0, 1)
    else if (world.stops.length > 0) answerStop(world, 0)
    else if (running(world).length > 0) endExecution(world, running(world)[0]!, 'success')
    else {
      const open = world.execs.find((e) => e.stream)
      if (open) closeStream(world, open, 'cut')
    }
    world.now += 300
    schedule(world)
    world.tabs.forEach((_, i) => answerRead(world, i, false))
    checkInvariants(world)
  }
  if (!isQuiet(world)) throw new Error('the model did not drain')
  // Quiet now: one read in each tab opens every gate a dropped relay message does not hold.
  world.tabs.forEach((_, i) => {
    dispatch(world, i, { type: 'read-wanted', urgent: true })
    schedule(world)
    answerRead(world, i, false)
  })
  checkInvariants(world)
  world.now += config.submitTimeoutMs + SILENT
  schedule(world)
  world.tabs.forEach((_, i) => {
    dispatch(world, i, { type: 'read-wanted', urgent: true })
    schedule(world)
    answerRead(world, i, false)
  })
  checkInvariants(world)
  world.tabs.forEach((tab, i) => {
    const status = sessionStatus(tab.state)
    if (status !== 'idle') throw new Error(`(iii) tab ${i} is ${status} once everything ended`)
  })
}
const SILENT = 130_000

const move = fc.record({ op: fc.nat(), a: fc.nat(), b: fc.nat() })
const skews = fc.array(fc.integer({ min: -3_600_000, max: 3_600_000 }), {
  minLength: 3,
  maxLength: 3,
})

function runModel(behaviour: Behaviour, moves: Move[], tabSkews: number[]) {
  const world = newWorld(behaviour, tabSkews)
  schedule(world)
  world.tabs.forEach((_, i) => answerRead(world, i, false))
  const trace: string[] = []
  try {
    for (const m of moves) play(world, m, trace)
    drain(world)
  } catch (cause) {
    throw new Error(`${String(cause)}\nafter:\n  ${trace.join('\n  ')}`)
  }
}

describe('the engine across three tabs, at reducer speed (model-based)', () => {
  for (const behaviour of ['spec', 'n8n'] as const) {
    it(`keeps (i)-(v) after every step against the ${behaviour} server`, async () => {
      await assertSeeded(
        `engine model ${behaviour}`,
        fc.property(fc.array(move, { maxLength: 80 }), skews, (moves, tabSkews) => {
          runModel(behaviour, moves, tabSkews)
        }),
        { numRuns: 1_500 },
      )
    }, 120_000)
  }
})
