/**
 * The session's life: listened to, quiet, disposed; and time passing (the deadlines of every
 * slice). Going quiet or being disposed ends what waits on this tab and says which requests go.
 */
import { PreviewChatError } from '../../wire/contract/errors'
import { activeExecutionId } from '../derive'
import type { Command, EngineAction, EngineConfig, EngineState, ReadState, Step } from '../model'
import { settleStop, step, andThen, wantRead } from './common'
import { submitDeadline } from './ownTurn'
import { relayDeadlines } from './relay'
import { stopDeadlines } from './stop'
import { SILENT_TURN_MAX_AGE_MS } from '../derive'

type Action<T extends EngineAction['type']> = Extract<EngineAction, { type: T }>

export const idleReads: ReadState = {
  inFlight: false,
  count: 0,
  wanted: false,
  urgent: false,
  lastStartedAt: -Infinity,
  failures: 0,
  polls: 0,
  lagPolls: 0,
  followUpAt: null,
  notBefore: -Infinity,
}

export function activated(state: EngineState, action: Action<'activated'>): Step {
  // Spec: "After a reload or disconnect, the client reads the recorded transcript."
  const wanted = !state.synced || state.cut || activeExecutionId(state) !== null
  // A prefetch on its way is this session's first read: nothing more is asked until it answers.
  const prefetching = action.readInFlight === true
  return step({
    ...state,
    active: true,
    push: { connected: action.pushConnected, lost: false },
    reads: {
      ...idleReads,
      wanted: wanted && !prefetching,
      inFlight: prefetching,
      count: state.reads.count + (prefetching ? 1 : 0),
      lastStartedAt: prefetching ? action.at : state.reads.lastStartedAt,
    },
  })
}

/** What waits on this tab when it goes quiet or is disposed: each ends with `error`, or plainly. */
function endPending(state: EngineState, error: PreviewChatError): Command[] {
  const commands: Command[] = []
  const { own, stop } = state
  if (own && !own.settled)
    commands.push({
      type: 'settle-submit',
      request: own.token,
      result: { outcome: 'failed', error },
    })
  if (stop) commands.push(...settleStop(stop.waiters, { cancelRequested: false }))
  if (state.reads.inFlight) commands.push({ type: 'cancel-read' })
  return commands
}

const quiet = (state: EngineState): EngineState => ({
  ...state,
  active: false,
  synced: false,
  own: null,
  stop: null,
  relay: null,
  syncAsked: null,
  postingHolds: {},
  reads: { ...idleReads, count: state.reads.count, lastStartedAt: state.reads.lastStartedAt },
})

/**
 * No subscriber any more. A read in flight is cancelled, not left to finish for nobody; a live
 * stream stops being read where the turn goes on without it (the spec's servers). Where a closed
 * POST cancels the turn (released n8n), or nobody knows yet, the stream is read to its end:
 * only Stop or `dispose()` may cancel a person's turn.
 */
export function deactivated(state: EngineState): Step {
  const error = new PreviewChatError(
    'disposed',
    'The session stopped being listened to before the server accepted the message; the record shows whether its turn runs.',
  )
  const closes: Command[] =
    state.server.keepsTurnOnDisconnect === true
      ? state.streams.map((token) => ({ type: 'close-stream', token }))
      : []
  return step(quiet(state), ...endPending(state, error), ...closes)
}

/** `dispose()`: for good. Every stream closes (documented: on n8n 2.41 that cancels the turn). */
export function disposed(state: EngineState): Step {
  const error = new PreviewChatError(
    'disposed',
    'The session was disposed before the server accepted the message.',
  )
  const closes: Command[] = state.streams.map((token) => ({ type: 'close-stream', token }))
  const { stop } = state
  const stopInFlight: Command[] =
    (stop?.kind === 'execution' && !stop.accepted) || (stop?.kind === 'runs' && !stop.answered)
      ? [{ type: 'abort-stop' }]
      : []
  return step(
    { ...quiet(state), disposed: true },
    ...endPending(state, error),
    ...closes,
    ...stopInFlight,
  )
}

/** A derived turn silent for `SILENT_TURN_MAX_AGE_MS` on this tab's clock no longer holds the gate. */
function silentDeadline(state: EngineState, at: number): Step {
  const { silent } = state
  if (!silent || silent.expired || at < silent.since + SILENT_TURN_MAX_AGE_MS) return step(state)
  return step(wantRead({ ...state, silent: { ...silent, expired: true } }))
}

/** Time passed: every deadline due at `at` fires. */
export function tick(state: EngineState, at: number, config: EngineConfig): Step {
  return andThen(
    submitDeadline(state, at, config),
    (s) => stopDeadlines(s, at, config),
    (s) => relayDeadlines(s, at, config),
    (s) => silentDeadline(s, at),
  )
}
