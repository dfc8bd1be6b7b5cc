/**
 * The queue model (issue 29): three tabs of one user, each its own production runner with the
 * queue's part of the reducer (`withQueue`), one storage and one set of locks between them as a
 * browser has them (localStorage, Web Locks: the write lock and the sender lock, granted in the
 * order asked), and a model server — one that dedupes by `messageId`, one that does not, one
 * that neither dedupes nor keeps the ids in its record (the released n8n 2.41, as far as the queue
 * can tell), and one with a queue of its own (the platform's next era: `message-queued`, its queue
 * read, edited, reordered, emptied and steered, another device writing into it; the tabs hand
 * messages over with `whenStopped: 'keep'`). No network, no real timers: runners' alarms are kept on the model's clock, the
 * queue's host is this file's, and every interleaving is random, by the thousand.
 *
 * Moves: write while busy (or not), edit, remove, reorder, send now, resume, Stop, a store
 * transaction run (and its tab closed right after its commit), another tab's write heard, a POST answered (taken, refused as busy, refused, its answer
 * lost), a turn advanced or ended (success, error), a read answered, time passing, a tab closed, a
 * tab reloaded. After every step:
 * (q1) no message is recorded twice, and on a server that does not dedupe none is POSTed twice;
 * (q2) the sender posts a queued message only when every message before it in its queue is
 *      `undelivered`: the queue's order is the order sent;
 * (q3) in the tab that sends, a message it shows as queued is not in its transcript;
 * (q4) nothing throws;
 * and once every tab is left to settle (a paused queue resumed, as the person would): every queued
 * message is recorded exactly once, or was removed, or is shown `undelivered` (with its error) for
 * the person to decide — never lost.
 *
 * What it found, each now pinned by a step of `queue.reduce.test.ts` ("found by the queue model"):
 * against the server's queue, a message the server queued on a POST of the sender's own turn shown
 * both queued and in the transcript once its turn began there (now it leaves the queue then);
 * a message written just before its page went, lost with the write lock never granted (now a
 * `queue-flush`); the next message chosen from a stale view, behind another tab's earlier one (now
 * chosen under the lock); "send now" and "remove" made on a stale view, sending twice what was
 * undelivered or removing what was on its way; a new sender deciding from storage events still on
 * their way (it reads storage when it gets the lock); a message another tab was sending, found
 * only under the lock, skipped (now judged first); an undelivered message's error kept as a class
 * instance that storage could not read back.
 */
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import type { Command, EngineAction, EngineState, ServerQueueCall } from '../engine/model'
import { initialEngineState, reducerWith } from '../engine/reduce'
import { createRunner, type Runner } from '../engine/runner'
import { selectSessionState } from '../engine/select'
import { withQueue } from '../engine/queue/reduce'
import { shownQueue } from '../engine/queue/server'
import { flushedQueue, serializeQueue } from '../engine/queue/stored'
import { replayTrace, traceRecorder } from '../engine/trace'
import type { TurnEvent } from '../wire/contract/events'
import { toErrorRecord } from '../wire/contract/errors'
import { errorFromResponse } from '../wire/contract/rest'
import { parseHistorySnapshot } from '../wire/contract/snapshot'
import { engineConfig, key } from './harness'
import { assertSeeded } from './seeded'

type Behaviour = 'dedupe' | 'no-dedupe' | 'no-ids' | 'server-queue'
const reducer = reducerWith(withQueue)
const config = engineConfig

interface Exec {
  id: string
  text: string
  messageId: string | undefined
  status: 'running' | 'success' | 'error' | 'cancelled'
  tokens: number
  stream: { tab: Tab; token: number } | null
  /** Queued messages steered into it (the server's queue), recorded as its user messages too. */
  steered: { text: string; messageId: string | undefined; queueId: string }[]
}

/** An item of the model server's own queue (`server-queue`). */
interface ServerItem {
  queueId: string
  text: string
  messageId: string | undefined
  state: 'pending' | 'steering'
  /** The POST that waits for it (the engine's own turn), if it is still read. */
  stream: { tab: Tab; token: number } | null
}

interface Post {
  tab: Tab
  token: number
  text: string
  messageId: string | undefined
}

interface Tab {
  index: number
  runner: Runner
  dead: boolean
  origin: number
  read: { fetch: number; body: unknown } | null
  /** What storage held after each other tab's write, in order (the `storage` events to come). */
  inbox: (string | null)[]
}

interface World {
  behaviour: Behaviour
  now: number
  tabs: Tab[]
  execs: Exec[]
  posts: Post[]
  stops: { tab: Tab; executionId: string }[]
  storage: string | null
  /** Tabs waiting for the write lock, in the order they asked. */
  writeLock: Tab[]
  /** The sender lock: its holder first, then the tabs waiting, in order. */
  senderLock: Tab[]
  timers: { tab: Tab; at: number; ring: () => void; cancelled: boolean }[]
  fetches: number
  ids: number
  /** Every message queued (`outcome: 'queued'`), in the order queued. */
  queued: string[]
  removeAsked: Set<string>
  /** POSTs that reached the server, and executions recorded, by `messageId`. */
  postsById: Map<string, number>
  /** What the server did with each message's last POST: not answered yet, refused, or taken. */
  fates: Map<string, 'open' | 'refused' | 'taken'>
  recordedById: Map<string, number>
  /** The order in which the sender took queued messages (their first POST). */
  sentOrder: string[]
  /** Queued POSTs seen (tab and token): a retry of the same one is not a new choice. */
  postedTokens: Set<string>
  traces: ReturnType<typeof traceRecorder>[]
  /** What happened to messages (POSTs, answers, writes), for a failure's report. */
  events: string[]
  /** `server-queue`: the server's own queue, and the calls to it waiting for their answers. */
  serverItems: ServerItem[]
  queueIds: number
  queueReads: { tab: Tab; seq: number; items: ServerItem[]; steerable: string | null }[]
  queuePosts: { tab: Tab; token: number; id: string; text: string }[]
  queueCalls: { tab: Tab; call: ServerQueueCall }[]
  /** Messages the server took (queued or run), by `messageId`: a second POST is a duplicate. */
  accepted: Set<string>
  /** What the server's queue saw, counted (the sizes the runs really produced). */
  counts: Record<
    'handedOver' | 'queuedByServer' | 'steers' | 'steered' | 'callsMade' | 'callsRefused' | 'reads',
    number
  >
}

/** The server answers a second POST of a `messageId` it took with a bare `done`. */
const dedupes = (world: World) => world.behaviour === 'dedupe' || world.behaviour === 'server-queue'
const tabId = (tab: Tab) => `tab-${tab.index}-${tab.origin}`
const at = (world: World, tab: Tab) => world.now + tab.origin
const live = (world: World) => world.tabs.filter((tab) => !tab.dead)
const runningExec = (world: World) => world.execs.find((e) => e.status === 'running')

function newWorld(behaviour: Behaviour): World {
  const world: World = {
    behaviour,
    now: 0,
    tabs: [],
    execs: [],
    posts: [],
    stops: [],
    storage: null,
    writeLock: [],
    senderLock: [],
    timers: [],
    fetches: 0,
    ids: 0,
    queued: [],
    removeAsked: new Set(),
    postsById: new Map(),
    fates: new Map(),
    recordedById: new Map(),
    sentOrder: [],
    postedTokens: new Set(),
    traces: [],
    events: [],
    serverItems: [],
    queueIds: 0,
    queueReads: [],
    queuePosts: [],
    queueCalls: [],
    accepted: new Set(),
    // What a tab learnt before (kept in the store): this server dedupes and queues.
    ...(behaviour === 'server-queue' && {
      storage: serializeQueue({
        items: [],
        paused: false,
        dedupes: true,
        serverQueue: true,
        serverRev: 0,
      }),
    }),
    counts: {
      handedOver: 0,
      queuedByServer: 0,
      steers: 0,
      steered: 0,
      callsMade: 0,
      callsRefused: 0,
      reads: 0,
    },
  }
  for (let i = 0; i < 3; i++) openTab(world, i)
  return world
}

/** A tab (re)opens: a page with its runner, the queue attached from storage, following the thread. */
function openTab(world: World, index: number) {
  const tab: Tab = {
    index,
    runner: null as unknown as Runner,
    dead: false,
    origin: ++world.ids * 1_000_003,
    read: null,
    inbox: [],
  }
  const initial = initialEngineState({ key, tab: tabId(tab) })
  const recorder = traceRecorder(initial, config)
  world.traces.push(recorder)
  tab.runner = createRunner(
    initial,
    config,
    {
      onStep: recorder.onStep,
      now: () => at(world, tab),
      setTimer(delay, ring) {
        const timer = { tab, at: world.now + delay, ring, cancelled: false }
        world.timers.push(timer)
        return () => void (timer.cancelled = true)
      },
      perform: (command) => perform(world, tab, command),
    },
    withQueue,
  )
  world.tabs[index] = tab
  const now = at(world, tab)
  dispatch(world, tab, {
    type: 'mounted',
    cached: { kind: 'none' },
    at: now,
    stampedAt: now,
    random: 0.5,
  })
  dispatch(world, tab, { type: 'activated', at: now, pushConnected: true })
  // Following: it asks for the sender lock (granted at once when free, as the Web Lock is).
  world.senderLock.push(tab)
  if (world.senderLock[0] === tab)
    dispatch(world, tab, { type: 'queue-sender', held: true, stored: world.storage })
}

/** The page goes away: its streams close, its locks are released (the browser does that). */
function closeTab(world: World, tab: Tab) {
  dispatch(world, tab, { type: 'disposed' })
  tab.dead = true
  tab.read = null
  tab.inbox = []
  for (const e of world.execs) if (e.stream?.tab === tab) e.stream = null
  world.stops = world.stops.filter((s) => s.tab !== tab)
  for (const item of world.serverItems) if (item.stream?.tab === tab) item.stream = null
  world.queueReads = world.queueReads.filter((r) => r.tab !== tab)
  world.queueCalls = world.queueCalls.filter((c) => c.tab !== tab)
  world.writeLock = world.writeLock.filter((t) => t !== tab)
  const held = world.senderLock[0] === tab
  world.senderLock = world.senderLock.filter((t) => t !== tab)
  const next = world.senderLock[0]
  if (held && next)
    dispatch(world, next, { type: 'queue-sender', held: true, stored: world.storage })
  world.timers = world.timers.filter((t) => t.tab !== tab)
}

/**
 * `QUEUE_MODEL_WATCH=<text>` (with `PREVIEW_CHAT_SEED=<seed>`): a failure's report also lists each
 * step at which a tab's view of the message whose text starts so changed (how a bug was traced).
 */
const WATCH = process.env.QUEUE_MODEL_WATCH
const watched = new Map<Tab, string>()

function dispatch(world: World, tab: Tab, action: EngineAction) {
  if (tab.dead) return
  try {
    tab.runner.dispatch(action)
  } catch (cause) {
    throw new Error(`(q4) the engine threw on ${action.type}: ${String(cause)}`)
  }
  if (WATCH) {
    const item = queueOf(tab).find((i) => i.text.startsWith(WATCH))
    const now = `${item?.status ?? 'absent'} own=${JSON.stringify(tab.runner.getState().own?.phase ?? null)} sending=${tab.runner.getState().queue?.sending?.id ?? null}`
    if (watched.get(tab) !== now)
      world.events.push(`  [watch] tab ${tab.index} after ${action.type}: ${now}`)
    watched.set(tab, now)
  }
  checkAfterStep(world)
}

const queueOf = (tab: Tab) => tab.runner.getState().queue?.view.items ?? []

/** A message POSTed (as a turn, or handed to the server's queue): (q1) and (q2) are checked. */
function posted(
  world: World,
  tab: Tab,
  token: number,
  text: string,
  messageId: string | undefined,
) {
  {
    {
      if (messageId !== undefined) {
        const count = (world.postsById.get(messageId) ?? 0) + 1
        world.postsById.set(messageId, count)
        // Again only once every earlier POST of it was refused (not taken), where no dedupe guards.
        const fate = world.fates.get(messageId)
        if ((fate === 'open' || fate === 'taken') && !dedupes(world))
          throw new Error(
            `(q1) "${text}" POSTed again (${count}) while an earlier POST of it ${fate === 'open' ? 'may have been' : 'was'} taken, to a server that does not dedupe`,
          )
        world.fates.set(messageId, 'open')
        const posted = `${tabId(tab)}:${token}`
        if (token < 0 && !world.postedTokens.has(posted)) {
          world.postedTokens.add(posted)
          // (q2) What is ahead of it in the sender's queue could not be sent (undelivered).
          // (What the server holds already is ahead of it by right.)
          const items = queueOf(tab).filter((i) => i.queueId === undefined)
          const ahead = items.slice(
            0,
            Math.max(
              0,
              items.findIndex((i) => i.id === messageId),
            ),
          )
          if (ahead.some((i) => i.status !== 'undelivered'))
            throw new Error(
              `(q2) tab ${tab.index} sent "${text}" with ${ahead.map((i) => `${i.text}:${i.status}`).join(', ')} ahead of it`,
            )
          if (!world.sentOrder.includes(messageId)) world.sentOrder.push(messageId)
        }
      }
    }
  }
}

function perform(world: World, tab: Tab, command: Command) {
  switch (command.type) {
    case 'post': {
      const { request, token } = command
      if (request.kind !== 'message') return
      const { message: text, messageId } = request.body
      posted(world, tab, token, text, messageId)
      world.posts.push({ tab, token, text, messageId })
      world.events.push(`tab ${tab.index} POSTs ${text} (token ${token})`)
      return
    }
    case 'queue-post':
      posted(world, tab, command.token, command.text, command.id)
      world.queuePosts.push({ tab, token: command.token, id: command.id, text: command.text })
      world.counts.handedOver++
      world.events.push(`tab ${tab.index} hands ${command.text} to the server's queue`)
      return
    case 'queue-read-server': {
      // Answered as the server holds it now, delivered whenever (a late answer included).
      const items = world.serverItems.map((item) => ({ ...item }))
      const running = runningExec(world)
      world.queueReads.push({ tab, seq: command.seq, items, steerable: running?.id ?? null })
      return
    }
    case 'queue-call':
      world.queueCalls.push({ tab, call: command.call })
      return
    case 'read': {
      const fetch = ++world.fetches
      tab.read = { fetch, body: record(world) }
      return dispatch(world, tab, { type: 'read-started', at: at(world, tab), fetch })
    }
    case 'cancel-read': {
      const read = tab.read
      tab.read = null
      if (read) dispatch(world, tab, { type: 'read-cancelled', fetch: read.fetch })
      return
    }
    case 'close-stream': {
      const e = world.execs.find((x) => x.stream?.tab === tab && x.stream.token === command.token)
      if (e) e.stream = null
      return
    }
    case 'stop-execution':
      world.stops.push({ tab, executionId: command.executionId })
      return
    case 'queue-open':
      // The store answers with what it holds (the model's storage is read at once).
      return dispatch(world, tab, {
        type: 'queue-attached',
        stored: world.storage,
        kept: true,
        // The server's queue is used with `keep` (its own rule); the others are tried with `pause`.
        whenStopped: world.behaviour === 'server-queue' ? 'keep' : 'pause',
        at: at(world, tab),
      })
    case 'queue-lock':
      world.writeLock.push(tab)
      return
    case 'queue-store': {
      const { stored } = command
      const empty = stored.items.length === 0 && !stored.paused && stored.dedupes === null
      world.storage = empty ? null : serializeQueue(stored)
      world.events.push(
        `tab ${tab.index} writes [${stored.items.map((i) => `${i.text}:${i.status}${i.by ? `@${i.by.split('-')[1]}` : ''}`).join(',')}]${stored.paused ? ' paused' : ''}`,
      )
      for (const other of live(world)) if (other !== tab) other.inbox.push(world.storage)
      return
    }
    case 'queue-flush': {
      // The page goes: its unwritten changes are written at once, without the lock.
      const stored = flushedQueue(world.storage, command.changes)
      return perform(world, tab, { type: 'queue-store', stored })
    }
    case 'settle-submit':
      if (command.result.outcome === 'queued') world.queued.push(command.result.id)
      return
    case 'warn':
      world.events.push(`tab ${tab.index} warns: ${command.message}`)
      return
    default:
      return
  }
}

/** The thread's record as the server answers a read. */
function record(world: World): unknown {
  const ids = world.behaviour !== 'no-ids'
  const said = (e: Exec, id: string, text: string, messageId: string | undefined) => ({
    id,
    role: 'user',
    content: [{ type: 'text', text }],
    executionId: e.id,
    executionStatus: e.status,
    createdAt: '2026-12-01T10:00:00.000Z',
    ...(ids && messageId !== undefined && { messageId }),
  })
  const messages = world.execs.flatMap((e) => [
    said(e, `${e.id}:user`, e.text, e.messageId),
    {
      id: `${e.id}:assistant`,
      role: 'assistant',
      content: e.tokens > 0 ? [{ type: 'text', text: 'w '.repeat(e.tokens) }] : [],
      executionId: e.id,
      executionStatus: e.status,
      createdAt: '2026-12-01T10:00:00.000Z',
    },
    // What was steered into the turn: user messages of its execution too.
    ...e.steered.map((x) => said(e, `${e.id}:steer:${x.queueId}`, x.text, x.messageId)),
  ])
  return { messages, openSuspensions: [], activeExecutionId: runningExec(world)?.id ?? null }
}

function notify(world: World, e: Exec) {
  const message = { type: 'agentExecutionUpdated' as const, data: { ...key, executionId: e.id } }
  for (const tab of live(world)) dispatch(world, tab, { type: 'push-message', message })
}

function toStream(world: World, e: Exec, events: TurnEvent[]) {
  if (!e.stream) return
  const { tab, token } = e.stream
  dispatch(world, tab, { type: 'turn-events', token, events, at: at(world, tab), stampedAt: 0 })
}

function endStream(world: World, e: Exec) {
  if (!e.stream) return
  const { tab, token } = e.stream
  e.stream = null
  dispatch(world, tab, { type: 'stream-ended', token, end: { kind: 'terminal' } })
}

function answerPost(world: World, index: number, choice: number) {
  const post = world.posts.splice(index, 1)[0]
  if (!post) return
  const { tab, token, text, messageId } = post
  world.events.push(`the server answers tab ${tab.index}'s ${text} (${choice % 6})`)
  const refused = () => messageId !== undefined && world.fates.set(messageId, 'refused')
  const deduping = dedupes(world)
  const queuesMessages = world.behaviour === 'server-queue'
  if (
    messageId !== undefined &&
    (world.recordedById.has(messageId) || world.accepted.has(messageId))
  ) {
    if (!deduping) throw new Error(`(q1) "${text}" reached the server again after it was taken`)
    // Already taken: a bare `done`, nothing recorded.
    dispatch(world, tab, {
      type: 'turn-opened',
      token,
      dedupesMessages: deduping,
      queuesMessages,
    })
    toStream(world, { stream: { tab, token } } as Exec, [{ type: 'done' }])
    return dispatch(world, tab, { type: 'stream-ended', token, end: { kind: 'terminal' } })
  }
  if (tab.dead && choice % 2 === 0) return void refused() // it never reached the server
  if (!tab.dead)
    dispatch(world, tab, {
      type: 'turn-opened',
      token,
      dedupesMessages: deduping,
      queuesMessages,
    })
  if (choice % 6 === 1 || (tab.dead && runningExec(world))) {
    refused()
    return dispatch(world, tab, {
      type: 'post-failed',
      token,
      error: toErrorRecord(errorFromResponse(429, { code: 429, message: 'Slow down' }, 'Sending')),
    })
  }
  if (runningExec(world) && world.behaviour === 'server-queue') {
    // Into the server's queue: `message-queued` is its acceptance; the POST waits for its turn.
    const item = enqueue(world, text, messageId, tab.dead ? null : { tab, token })
    if (choice % 6 === 5) {
      item.stream = null
      return dispatch(world, tab, {
        type: 'post-failed',
        token,
        error: toErrorRecord(errorFromResponse(502, '<html>Bad gateway</html>', 'Sending')),
      })
    }
    return toStream(world, { stream: item.stream } as Exec, [
      { type: 'message-queued', queueId: item.queueId, sessionId: key.threadId },
    ])
  }
  if (runningExec(world)) {
    refused()
    toStream(world, { stream: { tab, token } } as Exec, [
      { type: 'error', message: 'Busy.', errorCode: 'turn_already_running' },
    ])
    return dispatch(world, tab, { type: 'stream-ended', token, end: { kind: 'terminal' } })
  }
  const e = startExec(world, text, messageId, { tab, token })
  if (choice % 6 === 5) {
    // Taken, but its answer is lost before any event (a dropped connection).
    e.stream = null
    dispatch(world, tab, {
      type: 'post-failed',
      token,
      error: toErrorRecord(errorFromResponse(502, '<html>Bad gateway</html>', 'Sending')),
    })
  } else
    toStream(world, e, [{ type: 'execution-started', executionId: e.id, sessionId: key.threadId }])
  notify(world, e)
}

/** A turn begins (recorded first, as the server does): its stream, if one is read, hears it. */
function startExec(
  world: World,
  text: string,
  messageId: string | undefined,
  stream: { tab: Tab; token: number } | null,
): Exec {
  const e: Exec = {
    id: `e${world.execs.length + 1}`,
    text,
    messageId,
    status: 'running',
    tokens: 0,
    // A page that is gone reads no stream: the turn runs all the same (the spec's servers).
    stream: stream && !stream.tab.dead ? stream : null,
    steered: [],
  }
  world.execs.push(e)
  if (messageId !== undefined) {
    world.fates.set(messageId, 'taken')
    world.accepted.add(messageId)
    recorded(world, text, messageId)
  }
  return e
}

function recorded(world: World, text: string, messageId: string) {
  const count = (world.recordedById.get(messageId) ?? 0) + 1
  world.recordedById.set(messageId, count)
  if (count > 1) throw new Error(`(q1) "${text}" recorded ${count} times`)
}

/** The server's queue changed: every tab hears its push (no contents). */
function queueChanged(world: World) {
  for (const tab of live(world)) dispatch(world, tab, { type: 'queue-server-changed', thread: key })
}

function enqueue(
  world: World,
  text: string,
  messageId: string | undefined,
  stream: ServerItem['stream'],
): ServerItem {
  const item: ServerItem = {
    queueId: String(++world.queueIds),
    text,
    messageId,
    state: 'pending',
    stream,
  }
  world.serverItems.push(item)
  world.counts.queuedByServer++
  if (messageId !== undefined) {
    world.fates.set(messageId, 'taken')
    world.accepted.add(messageId)
  }
  world.events.push(`the server queues ${text} as ${item.queueId}`)
  queueChanged(world)
  return item
}

/**
 * The thread is free: the server takes up its next item (steers the ended turn did not take in
 * went back to waiting, in place), on the POST that waits for it if one is read.
 */
function takeUpNext(world: World) {
  for (const item of world.serverItems) item.state = 'pending'
  if (runningExec(world)) return
  const item = world.serverItems.shift()
  if (!item) return
  const e = startExec(world, item.text, item.messageId, item.stream)
  world.events.push(`the server takes up ${item.text} as ${e.id}`)
  toStream(world, e, [{ type: 'execution-started', executionId: e.id, sessionId: key.threadId }])
  notify(world, e)
  queueChanged(world)
}

function advance(world: World, choice: number) {
  const e = runningExec(world)
  if (!e) return
  // Against the server's queue, turns last longer: messages wait in it meanwhile.
  if (choice % (world.behaviour === 'server-queue' ? 8 : 4) !== 0) {
    e.tokens++
    toStream(world, e, [{ type: 'text-delta', id: 't', delta: 'w ' }])
    // At the agent's pause, what was steered into this turn joins it.
    const steering = world.serverItems.filter((i) => i.state === 'steering')
    if (steering.length === 0) return
    world.serverItems = world.serverItems.filter((i) => i.state !== 'steering')
    for (const item of steering) {
      e.steered.push({ text: item.text, messageId: item.messageId, queueId: item.queueId })
      world.counts.steered++
      if (item.messageId !== undefined) recorded(world, item.text, item.messageId)
      if (item.stream) {
        const { tab, token } = item.stream
        toStream(world, { stream: item.stream } as Exec, [{ type: 'done' }])
        dispatch(world, tab, { type: 'stream-ended', token, end: { kind: 'terminal' } })
      }
      world.events.push(`${item.text} is steered into ${e.id}`)
    }
    queueChanged(world)
    return
  }
  e.status = choice % 8 === 4 ? 'error' : 'success'
  toStream(
    world,
    e,
    e.status === 'error'
      ? [{ type: 'error', message: 'The agent failed' }]
      : [{ type: 'done', executionId: e.id }],
  )
  endStream(world, e)
  notify(world, e)
  takeUpNext(world)
}

function answerStop(world: World) {
  const stop = world.stops.shift()
  if (!stop) return
  const e = world.execs.find((x) => x.id === stop.executionId)
  const cancelRequested = e?.status === 'running'
  dispatch(world, stop.tab, {
    type: 'stop-answered',
    executionId: stop.executionId,
    cancelRequested,
  })
  if (!e || !cancelRequested) return
  e.status = 'cancelled'
  toStream(world, e, [{ type: 'done', executionId: e.id }])
  endStream(world, e)
  notify(world, e)
  // "Stop leaves pending items in place; the next one starts after the cancel settles."
  takeUpNext(world)
}

/** A message handed to the server's queue is answered (or its answer is lost: `choice`). */
function answerQueuePost(world: World, index: number, choice: number) {
  const post = world.queuePosts.splice(index, 1)[0]
  if (!post) return
  const { tab, token, id, text } = post
  world.events.push(`the server answers tab ${tab.index}'s hand-over of ${text} (${choice % 5})`)
  const answer = (heard: Extract<EngineAction, { type: 'queue-posted' }>['heard']) =>
    dispatch(world, tab, { type: 'queue-posted', token, heard })
  const lost = () =>
    answer({ failed: toErrorRecord(errorFromResponse(502, 'Bad gateway', 'Sending')) })
  if (world.accepted.has(id)) return answer({ event: { type: 'done' } })
  if (choice % 5 === 1 || (tab.dead && choice % 2 === 0)) {
    world.fates.set(id, 'refused') // it never reached the server
    return lost()
  }
  if (runningExec(world)) {
    const item = enqueue(world, text, id, null)
    return choice % 5 === 2
      ? lost()
      : answer({
          event: { type: 'message-queued', queueId: item.queueId, sessionId: key.threadId },
        })
  }
  const e = startExec(world, text, id, null)
  notify(world, e)
  return choice % 5 === 2
    ? lost()
    : answer({ event: { type: 'execution-started', executionId: e.id, sessionId: key.threadId } })
}

function answerQueueRead(world: World, index: number) {
  const read = world.queueReads.splice(index, 1)[0]
  if (!read) return
  world.counts.reads++
  dispatch(world, read.tab, {
    type: 'queue-server-read',
    seq: read.seq,
    server: {
      steerable: read.steerable,
      items: read.items.map((i) => ({
        queueId: i.queueId,
        text: i.text,
        steering: i.state === 'steering',
      })),
    },
  })
}

/** A change of the server's queue, made or refused as the platform's routes do. */
function answerQueueCall(world: World, index: number) {
  const made = world.queueCalls.splice(index, 1)[0]
  if (!made) return
  const { tab, call } = made
  const item = world.serverItems.find((i) => i.queueId === call.queueId)
  const refuse = (status: number, code: string) => {
    world.counts.callsRefused++
    dispatch(world, tab, {
      type: 'queue-called',
      call,
      error: toErrorRecord(
        errorFromResponse(status, { code, message: code }, 'Changing the queue'),
      ),
      conflict: status === 409 ? code : null,
    })
  }
  if (!item) return refuse(404, 'not_found')
  if (item.state !== 'pending') return refuse(409, 'queue_item_steering')
  const pending = world.serverItems.filter((i) => i.state === 'pending').map((i) => i.queueId)
  switch (call.op) {
    case 'edit':
      item.text = call.text
      break
    case 'remove':
      world.serverItems = world.serverItems.filter((i) => i !== item)
      if (item.stream) {
        const { tab: poster, token } = item.stream
        toStream(world, { stream: item.stream } as Exec, [
          { type: 'error', message: 'Removed.', errorCode: 'queue_item_removed' },
        ])
        dispatch(world, poster, { type: 'stream-ended', token, end: { kind: 'terminal' } })
      }
      break
    case 'reorder': {
      if (pending.join() !== call.expectedQueueIds.join()) return refuse(409, 'queue_changed')
      const to = pending.indexOf(call.targetQueueId)
      if (to < 0) return refuse(400, 'bad_request')
      const order = pending.filter((id) => id !== item.queueId)
      order.splice(to, 0, item.queueId)
      const byId = new Map(world.serverItems.map((i) => [i.queueId, i]))
      const steering = world.serverItems.filter((i) => i.state === 'steering')
      world.serverItems = [...steering, ...order.flatMap((id) => byId.get(id) ?? [])]
      break
    }
    case 'steer':
      if (runningExec(world)?.id !== call.executionId) return refuse(409, 'not_steerable')
      item.state = 'steering'
      world.serverItems = [item, ...world.serverItems.filter((i) => i !== item)]
      world.counts.steers++
      break
  }
  world.events.push(`the server's queue: ${call.op} ${call.queueId} by tab ${tab.index}`)
  world.counts.callsMade++
  dispatch(world, tab, { type: 'queue-called', call, error: null, conflict: null })
  queueChanged(world)
}

function answerRead(world: World, tab: Tab) {
  const read = tab.read
  if (!read) return
  tab.read = null
  const parsed = parseHistorySnapshot(read.body)
  if (!parsed.success) throw new Error(`the model's record does not parse: ${parsed.error.message}`)
  const now = at(world, tab)
  dispatch(world, tab, {
    type: 'snapshot',
    snapshot: parsed.value,
    fresh: true,
    fromRead: true,
    at: now,
    stampedAt: now,
    random: 0.5,
  })
}

/** A tab's transaction of the store runs: read, the reducer's write, committed, then told so. */
function grantWriteLock(world: World, crash = false) {
  const tab = world.writeLock.shift()
  if (!tab) return
  const before = world.storage
  dispatch(world, tab, { type: 'queue-locked', stored: world.storage })
  // The page goes between the commit and being told of it: a message marked `sending`, not sent.
  if (crash) return closeTab(world, tab)
  if (world.storage !== before || tab.runner.getState().queue?.sending?.posted === false)
    dispatch(world, tab, { type: 'queue-written' })
}

/** A `storage` event reaches the tab: its host reads what storage holds now (not then). */
function hearStorage(world: World, tab: Tab) {
  if (tab.inbox.length === 0) return
  tab.inbox.shift()
  dispatch(world, tab, { type: 'queue-stored', stored: world.storage })
}

function passTime(world: World) {
  const due = world.timers.filter((t) => !t.cancelled).sort((x, y) => x.at - y.at)[0]
  if (!due) return
  world.now = Math.max(world.now, due.at)
  due.cancelled = true
  world.timers = world.timers.filter((t) => !t.cancelled)
  due.ring()
}

// --- the invariants -------------------------------------------------------------------------------

function checkAfterStep(world: World) {
  // (q3) The sender shows no queued message in its transcript.
  const sender = world.senderLock[0]
  if (!sender || sender.dead) return
  const state = sender.runner.getState()
  const waiting = new Set(
    queueOf(sender)
      .filter((i) => i.status === 'queued')
      .map((i) => i.text),
  )
  if (waiting.size === 0) return
  for (const message of selectSessionState(state).messages) {
    const text = message.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
    if (message.role === 'user' && waiting.has(text))
      throw new Error(
        `(q3) the sender (tab ${sender.index}) shows "${text}" queued and in its transcript: ${JSON.stringify(state.queue)}`,
      )
  }
}

/** Every tab left to settle: locks granted, writes heard, turns ended, reads answered, time passed. */
function drain(world: World) {
  for (let round = 0; round < 2_000; round++) {
    const tabs = live(world)
    if (world.writeLock.length > 0) grantWriteLock(world)
    else if (tabs.some((t) => t.inbox.length > 0))
      hearStorage(
        world,
        tabs.find((t) => t.inbox.length > 0)!,
      )
    else if (world.stops.length > 0) answerStop(world)
    else if (world.posts.length > 0) answerPost(world, 0, 0)
    else if (world.queuePosts.length > 0) answerQueuePost(world, 0, 0)
    else if (world.queueCalls.length > 0) answerQueueCall(world, 0)
    else if (world.queueReads.length > 0) answerQueueRead(world, 0)
    else if (runningExec(world)) advance(world, 0)
    else if (tabs.some((t) => t.read))
      answerRead(
        world,
        tabs.find((t) => t.read)!,
      )
    else if (world.timers.some((t) => !t.cancelled && t.at <= world.now + 60_000)) passTime(world)
    else return
  }
  throw new Error('the world did not settle in 2,000 rounds')
}

function checkSettled(world: World) {
  const shown = new Map<string, EngineState['queue']>()
  for (const tab of live(world)) shown.set(tabId(tab), tab.runner.getState().queue)
  const undelivered = new Set(
    live(world).flatMap((t) =>
      queueOf(t)
        .filter((i) => i.status === 'undelivered')
        .map((i) => i.id),
    ),
  )
  for (const id of world.queued) {
    const recorded = world.recordedById.get(id) ?? 0
    if (recorded === 1 || world.removeAsked.has(id) || undelivered.has(id)) continue
    const where = [...shown].map(([tab, q]) => `${tab}: ${JSON.stringify(q?.view.items)}`)
    throw new Error(
      `a queued message (${id}) was lost: recorded ${recorded} times\n${where.join('\n')}`,
    )
  }
}

// --- the moves ------------------------------------------------------------------------------------

interface Move {
  op: number
  a: number
  b: number
}

let texts = 0

function play(world: World, { op, a, b }: Move, log: string[]) {
  const tab = world.tabs[a % world.tabs.length]!
  // The queue as the person sees it (with the server's items, where it has a queue).
  const queue = tab.runner.getState().queue
  const items = queue ? shownQueue(queue) : []
  const item = items[b % Math.max(1, items.length)]
  // Against the server's queue, its answers too (hand-overs the most: each holds up the next).
  switch (op % (world.behaviour === 'server-queue' ? 31 : 15)) {
    case 0:
    case 1: {
      const text = `m${++texts}`
      log.push(`tab ${tab.index} writes ${text}`)
      return dispatch(world, tab, {
        type: 'submit-requested',
        request: ++world.ids,
        text,
        messageId: `id-${text}`,
        at: at(world, tab),
      })
    }
    case 2:
      if (!item) return
      log.push(`tab ${tab.index} edits ${item.text}`)
      return dispatch(world, tab, { type: 'queue-edit', id: item.id, text: `${item.text}e` })
    case 3:
      if (!item) return
      log.push(`tab ${tab.index} removes ${item.text}`)
      if (item.status !== 'sending') world.removeAsked.add(item.id)
      // An item of the server's queue is shown under its queue id when no tab knows its own.
      for (const held of world.serverItems)
        if (held.queueId === item.queueId && held.messageId) world.removeAsked.add(held.messageId)
      return dispatch(world, tab, { type: 'queue-remove', id: item.id })
    case 4:
      if (!item) return
      log.push(`tab ${tab.index} moves ${item.text} to ${b % 3}`)
      return dispatch(world, tab, { type: 'queue-reorder', id: item.id, to: b % 3 })
    // (Against the server's queue "send now" steers into the running turn: more of it, 28-30.)
    case 28:
    case 29:
    case 30:
    case 5:
      // "Send now" of a message that may have been sent is the person's decision: not modelled.
      if (!item || item.status !== 'queued') return
      log.push(`tab ${tab.index} sends ${item.text} now`)
      return dispatch(world, tab, { type: 'queue-send-now', id: item.id })
    case 6:
      log.push(`tab ${tab.index} resumes the queue`)
      return dispatch(world, tab, { type: 'queue-resume' })
    case 7:
      log.push(`tab ${tab.index} presses Stop`)
      return dispatch(world, tab, {
        type: 'stop-requested',
        request: ++world.ids,
        at: at(world, tab),
      })
    case 8:
      log.push(`a write lock is granted${b % 5 === 0 ? ', and its tab closes right after' : ''}`)
      return grantWriteLock(world, b % 5 === 0)
    case 9:
      log.push(`tab ${tab.index} hears storage`)
      return hearStorage(world, tab)
    case 10:
      log.push(`a POST is answered (${b % 6})`)
      return answerPost(world, b % Math.max(1, world.posts.length), b)
    case 11:
      log.push(`the turn goes on (${b % 8})`)
      if (b % 3 === 0) return answerStop(world)
      return advance(world, b)
    case 12:
      log.push(`tab ${tab.index}'s read is answered`)
      return answerRead(world, tab)
    case 13:
      log.push('time passes')
      return passTime(world)
    case 14:
      log.push(`tab ${tab.index} ${b % 2 ? 'reloads' : 'closes and opens again'}`)
      closeTab(world, tab)
      if (b % 2 === 1) return openTab(world, tab.index)
      // A tab closed mid-send stays closed for a while: the others go on without it.
      return
    case 15:
    case 16:
    case 17:
      log.push(`a hand-over is answered (${b % 5})`)
      return answerQueuePost(world, b % Math.max(1, world.queuePosts.length), b)
    case 18:
      log.push(`a read of the server's queue is answered`)
      return answerQueueRead(world, b % Math.max(1, world.queueReads.length))
    case 19:
    case 20:
      log.push(`a change of the server's queue is answered`)
      return answerQueueCall(world, b % Math.max(1, world.queueCalls.length))
    case 21:
    case 22:
      log.push('a write lock is granted')
      return grantWriteLock(world)
    case 23:
      log.push(`tab ${tab.index} hears storage`)
      return hearStorage(world, tab)
    case 24:
    case 25:
      log.push(`tab ${tab.index}'s read is answered`)
      return answerRead(world, tab)
    case 26:
    case 27: {
      // Another device of the user (the platform's web client) writes: the server queues it.
      const text = `d${++texts}`
      log.push(`another device writes ${text}`)
      if (runningExec(world)) return void enqueue(world, text, `dev-${text}`, null)
      return notify(world, startExec(world, text, `dev-${text}`, null))
    }
  }
}

function runModel(behaviour: Behaviour, moves: Move[], replay: boolean) {
  const world = newWorld(behaviour)
  const log: string[] = []
  try {
    for (const move of moves) play(world, move, log)
    // Closed tabs come back (a person opens the thread again), then everything settles; a
    // paused queue is resumed ("Send queued (N)"), as the person would to send what waits.
    for (const tab of world.tabs) if (tab.dead) openTab(world, tab.index)
    drain(world)
    for (let i = 0; i < 5 && live(world).some((t) => t.runner.getState().queue?.view.paused); i++) {
      const tab = live(world).find((t) => t.runner.getState().queue?.view.paused)!
      dispatch(world, tab, { type: 'queue-resume' })
      drain(world)
    }
    checkSettled(world)
    if (replay)
      for (const recorder of world.traces) {
        const divergence = replayTrace(JSON.parse(JSON.stringify(recorder.trace())), reducer)
        if (divergence) throw new Error(`a trace replays otherwise: ${JSON.stringify(divergence)}`)
      }
  } catch (cause) {
    throw new Error(
      `${String(cause)}\nafter:\n  ${log.join('\n  ')}\nmessages:\n  ${world.events.slice(WATCH ? -120 : -40).join('\n  ')}`,
    )
  }
  return world
}

vi.setConfig({ testTimeout: 600_000 })
const RUNS = 600
const move = fc.record({ op: fc.nat(), a: fc.nat(), b: fc.nat() })

describe('the queue across three tabs, through the runner (model-based) [R-QUEUE-CLIENT-ONCE]', () => {
  for (const behaviour of ['dedupe', 'no-dedupe', 'no-ids', 'server-queue'] as const) {
    it(`keeps (q1)-(q4) after every step, and loses nothing, against a server with ${behaviour}`, () => {
      const lengths: number[] = []
      let queued = 0
      let recorded = 0
      let undelivered = 0
      const counts: Record<string, number> = {}
      assertSeeded(
        `queue model ${behaviour}`,
        fc.property(fc.array(move, { minLength: 40, maxLength: 100, size: 'max' }), (moves) => {
          lengths.push(moves.length)
          const world = runModel(behaviour, moves, lengths.length % 25 === 0)
          queued += world.queued.length
          recorded += world.queued.filter((id) => world.recordedById.get(id) === 1).length
          undelivered += world.queued.filter(
            (id) => !world.recordedById.has(id) && !world.removeAsked.has(id),
          ).length
          for (const [what, n] of Object.entries(world.counts))
            counts[what] = (counts[what] ?? 0) + n
        }),
        { numRuns: RUNS },
      )
      const sorted = [...lengths].sort((x, y) => x - y)
      const median = sorted[Math.floor(sorted.length / 2)] ?? 0
      // What the runs really produced, not what was asked for.
      console.log(
        `[queue model ${behaviour}] runs ${lengths.length}, moves median ${median} (min ${sorted[0]}, max ${sorted.at(-1)}); messages queued ${queued}, recorded once ${recorded}, left undelivered ${undelivered}` +
          (behaviour === 'server-queue'
            ? `; the server's queue: handed over ${counts.handedOver}, queued by the server ${counts.queuedByServer}, changes made ${counts.callsMade} (steers ${counts.steers}, of which joined their turn ${counts.steered}), refused ${counts.callsRefused}, reads answered ${counts.reads}`
            : ''),
      )
      if (behaviour === 'server-queue') {
        expect(counts.handedOver, 'handed over').toBeGreaterThan(RUNS)
        expect(counts.queuedByServer, 'queued by the server').toBeGreaterThan(RUNS)
        expect(counts.callsMade, 'changes made').toBeGreaterThan(RUNS / 10)
        // A refusal needs a change asked on a stale view, a steer "send now" while the turn the
        // last read named still runs: rarer, but each must happen (one that joined its turn
        // needs a pause of it after that: the rarest, printed).
        expect(counts.callsRefused, 'changes refused').toBeGreaterThan(RUNS / 60)
        expect(counts.steers, 'steers').toBeGreaterThan(RUNS / 60)
      }
      expect(median).toBeGreaterThanOrEqual(40)
      expect(queued).toBeGreaterThan(RUNS)
      expect(recorded).toBeGreaterThan(queued / 4)
    })
  }
})
