/**
 * The session's life: listened to, quiet, disposed; and time passing (the deadlines of every
 * slice). Going quiet or being disposed ends what waits on this tab and says which requests go.
 */
import { errorRecord, type ErrorRecord } from '../../wire/contract/errors'
import { activeExecutionId } from '../derive'
import type { Command, EngineAction, EngineConfig, EngineState, ReadState, Step } from '../model'
import { andThen, reported, settled, settleStop, step } from './common'
import { submitDeadline } from './ownTurn'
import { readDueAt } from './reads'
import { applySnapshot } from './snapshot'
import { stopDeadlines } from './stop'
import { explain } from '../../wire/contract/explain'

type Action<T extends EngineAction['type']> = Extract<EngineAction, { type: T }>

export const idleReads: ReadState = {
  inFlight: false,
  fetch: null,
  waiters: [],
  count: 0,
  wanted: false,
  urgent: false,
  lastStartedAt: null,
  failures: 0,
  polls: 0,
  lagPolls: 0,
  followUpAt: null,
  notBefore: null,
}

/**
 * The session was made. Stale-while-revalidate: what the query cache holds shows at once (junk
 * there is ignored, with a warning, and the thread is read); the gate waits for a fresh read.
 */
export function mounted(state: EngineState, action: Action<'mounted'>, config: EngineConfig): Step {
  const { cached } = action
  if (cached.kind === 'none') return step(state)
  if (cached.kind === 'invalid')
    return step(state, {
      type: 'warn',
      message: `Ignored what the query cache holds for a thread: ${cached.message}${explain('cache-ignored')}`,
    })
  const taken = applySnapshot(
    state,
    {
      type: 'snapshot',
      snapshot: cached.snapshot,
      fresh: false,
      fromRead: false,
      at: action.at,
      stampedAt: action.stampedAt,
      random: action.random,
    },
    config,
  )
  return { ...taken, state: { ...taken.state, recordedHere: cached.keptHere } }
}

export function activated(state: EngineState, action: Action<'activated'>): Step {
  // Spec: "After a reload or disconnect, the client reads the recorded transcript."
  // A stale `isNew` hint (`staleHint`) was taken for the first render only.
  const wanted = !state.synced || state.staleHint || state.cut || activeExecutionId(state) !== null
  // A read on its way (a prefetch) is this session's first read: nothing more is asked until it
  // answers, and the next read keeps its distance from it.
  const { reads } = state
  return step({
    ...state,
    active: true,
    push: { connected: action.pushConnected, lost: false },
    reads: {
      ...idleReads,
      wanted: wanted && !reads.inFlight,
      inFlight: reads.inFlight,
      fetch: reads.fetch,
      waiters: reads.waiters,
      count: reads.count,
      lastStartedAt: reads.lastStartedAt,
    },
  })
}

/**
 * `prefetch()`: the first read, started before the session is listened to. Its call waits for the
 * read on its way, this one or one already there (`waitForReads` in `reduce.ts`).
 */
export function prefetchRequested(state: EngineState, action: Action<'prefetch-requested'>): Step {
  if (state.active || state.synced || state.reads.inFlight) return step(state)
  return startRead(state, action.at)
}

/** A read starts now: at most one in flight, and what was asked for is on its way. */
function startRead(state: EngineState, at: number): Step {
  const reads: ReadState = {
    ...state.reads,
    inFlight: true,
    fetch: null,
    count: state.reads.count + 1,
    wanted: false,
    urgent: false,
    followUpAt: null,
    lastStartedAt: at,
  }
  return step({ ...state, reads }, { type: 'read' })
}

/**
 * What waits on this tab when it goes quiet or is disposed (`done`, the state it leaves): each ends
 * with `error`, or plainly, before what `done` does.
 */
function endPending(state: EngineState, error: ErrorRecord, done: Step): Step {
  const commands: Command[] = []
  const { own, stop } = state
  if (stop) commands.push(...settleStop(stop.waiters, { cancelRequested: false }))
  if (state.reads.inFlight) commands.push({ type: 'cancel-read' })
  const ended = { ...done, commands: [...commands, ...done.commands] }
  return own && !own.settled ? settled(own.token, { outcome: 'failed', error }, ended) : ended
}

const quiet = (state: EngineState): EngineState => ({
  ...state,
  active: false,
  synced: false,
  own: null,
  stop: null,
  reads: {
    ...idleReads,
    count: state.reads.count,
    lastStartedAt: state.reads.lastStartedAt,
    // Settled by `reduce` right after: nobody listens any more.
    waiters: state.reads.waiters,
  },
})

/** Going quiet is reported, for the parts that follow other tabs (the relay's). */
const wentQuiet = (done: Step) => reported(done, { type: 'went-quiet' })

/**
 * No subscriber any more. A read in flight is cancelled, not left to finish for nobody; a live
 * stream stops being read where the turn goes on without it (the spec's servers). Where a closed
 * POST cancels the turn (released n8n), or nobody knows yet, the stream is read to its end:
 * only Stop or `dispose()` may cancel a person's turn.
 */
export function deactivated(state: EngineState): Step {
  const error = errorRecord(
    'disposed',
    `The session stopped being listened to before the server accepted the message.${explain('disposed')}`,
  )
  const closes: Command[] =
    state.server.keepsTurnOnDisconnect === true
      ? state.streams.map((token) => ({ type: 'close-stream', token }))
      : []
  return endPending(state, error, wentQuiet(step(quiet(state), ...closes)))
}

/** `dispose()`: for good. Every stream closes (documented: on n8n 2.41 that cancels the turn). */
export function disposed(state: EngineState): Step {
  const error = errorRecord(
    'disposed',
    `The session was disposed before the server accepted the message.${explain('disposed')}`,
  )
  const closes: Command[] = state.streams.map((token) => ({ type: 'close-stream', token }))
  const { stop } = state
  const stopInFlight: Command[] =
    (stop?.kind === 'execution' && !stop.accepted) || (stop?.kind === 'runs' && !stop.answered)
      ? [{ type: 'abort-stop' }]
      : []
  return endPending(
    state,
    error,
    wentQuiet(step({ ...quiet(state), disposed: true }, ...closes, ...stopInFlight)),
  )
}

/** The read wanted (or a retry, a poll) starts once its time has come (`readDueAt`). */
function readDeadline(state: EngineState, at: number, config: EngineConfig): Step {
  const due = readDueAt(state, config)
  return due === null || at < due ? step(state) : startRead(state, at)
}

/**
 * The alarm rang (`set-alarm`): every deadline due at `at` fires (this tab's message's, the
 * Stop's), then the read due starts. Each deadline is its slice's `…DueAt`, the same function the
 * scheduler takes the minimum of. A part's deadlines (the relay's, a silent turn's: its `dueAt`)
 * are its own: its wrapper does them before the engine's `tick`, so that a read they want starts
 * in the same step.
 */
export function tick(state: EngineState, at: number, config: EngineConfig): Step {
  return andThen(
    submitDeadline({ ...state, wakeAt: null }, at, config),
    (s) => stopDeadlines(s, at, config),
    (s) => readDeadline(s, at, config),
  )
}
