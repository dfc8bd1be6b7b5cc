/**
 * The one reducer: every change of a session's state is one of the actions of `model.ts`, and
 * what the session must do about it comes back as commands. Each action has its handler in a
 * slice (`slices/`); this file routes, and keeps the draft's storage in step.
 */
import type { ThreadKey } from '../wire/contract/ids'
import type { HistorySnapshot } from '../wire/contract/snapshot'
import type { LiveTurn } from './fold'
import type { EngineAction, EngineConfig, EngineState, ServerTraits, Step } from './model'
import { step, wantRead } from './slices/common'
import { activated, deactivated, disposed, idleReads, tick } from './slices/lifecycle'
import { postFailed, requestTurn, streamEnded, turnEvents } from './slices/ownTurn'
import { pushChanged, pushMessage, readFailed, readStarted } from './slices/reads'
import { relayReceived } from './slices/relay'
import { applySnapshot } from './slices/snapshot'
import { requestStop, runsAnswered, runsFailed, stopAnswered, stopFailed } from './slices/stop'

export function initialEngineState(init: {
  key: ThreadKey
  /** This tab's id on the relay between tabs. */
  tab: string
  draft?: string
  isNew?: boolean
  /** A running turn's live view kept across a reload: it stands until a record covers it. */
  live?: LiveTurn | null
  server?: Partial<ServerTraits>
}): EngineState {
  return {
    key: init.key,
    tab: init.tab,
    active: false,
    disposed: false,
    recorded: null,
    synced: init.isNew ?? false,
    notFound: false,
    live: init.live ?? null,
    kept: (init.live ?? null) !== null,
    liveAfterRead: 0,
    settled: [],
    own: null,
    streams: [],
    stop: null,
    reads: idleReads,
    push: { connected: false, lost: false },
    relay: null,
    syncAsked: null,
    postingHolds: {},
    silent: null,
    answered: [],
    watching: [],
    reported: [],
    standInBase: [],
    cut: false,
    draft: init.draft ?? '',
    error: null,
    readError: null,
    lastSyncedAt: null,
    server: {
      keepsTurnOnDisconnect: init.server?.keepsTurnOnDisconnect ?? null,
      stopsByExecutionId: init.server?.stopsByExecutionId ?? null,
    },
  }
}

type Handler<T extends EngineAction['type']> = (
  state: EngineState,
  action: Extract<EngineAction, { type: T }>,
  config: EngineConfig,
) => Step

/** Each action's handler, in its slice. */
const handlers: { [T in EngineAction['type']]: Handler<T> } = {
  activated,
  deactivated,
  disposed,
  tick: (state, { at }, config) => tick(state, at, config),
  'draft-changed': (state, { draft }) => step({ ...state, draft }),
  'error-cleared': (state) => step({ ...state, error: null }),
  'submit-requested': requestTurn,
  'resume-requested': requestTurn,
  'post-failed': postFailed,
  'turn-events': turnEvents,
  'stream-ended': streamEnded,
  'relay-received': relayReceived,
  'read-wanted': (state, { urgent }) => step(wantRead(state, urgent)),
  // Only before the session is listened to and has read: after that, reads are the scheduler's.
  // (A disposed session routes no action at all.)
  'prefetch-requested': (state) =>
    step(state, ...(state.active || state.synced ? [] : [{ type: 'prefetch' as const }])),
  'push-message': pushMessage,
  'read-started': readStarted,
  'read-cancelled': (state) => step({ ...state, reads: { ...state.reads, inFlight: false } }),
  snapshot: applySnapshot,
  'read-failed': readFailed,
  'push-changed': pushChanged,
  'stop-requested': requestStop,
  'stop-answered': stopAnswered,
  'stop-failed': stopFailed,
  'runs-answered': runsAnswered,
  'runs-failed': runsFailed,
}

function route(state: EngineState, action: EngineAction, config: EngineConfig): Step {
  const handler = handlers[action.type] as Handler<EngineAction['type']>
  return handler(state, action, config)
}

/** `reduce(state, action)` → the next state and the commands to perform. Pure; never throws. */
export function reduce(state: EngineState, action: EngineAction, config: EngineConfig): Step {
  // A disposed session takes nothing more: its requests were aborted, its outcomes given, and
  // a call made now is answered at once.
  if (state.disposed) return afterDispose(state, action)
  const next = route(state, action, config)
  const { draft, live } = next.state
  if (draft === state.draft && (live === state.live || !config.keepLive)) return next
  const commands = [...next.commands]
  if (draft !== state.draft) commands.push({ type: 'store-draft', draft })
  if (live !== state.live && config.keepLive) commands.push({ type: 'keep-live', turn: live })
  return { state: { ...next.state, kept: next.state.kept && live === state.live }, commands }
}

function afterDispose(state: EngineState, action: EngineAction): Step {
  if (action.type === 'submit-requested' || action.type === 'resume-requested')
    return step(state, {
      type: 'settle-submit',
      request: action.request,
      result: { outcome: 'busy' },
    })
  if (action.type === 'stop-requested')
    return step(state, {
      type: 'settle-stop',
      requests: [action.request],
      result: { cancelRequested: false },
    })
  return step(state)
}

/** The snapshot action of a snapshot reaching the session (from the cache, a read, or the app). */
export function snapshotAction(
  snapshot: HistorySnapshot,
  origin: 'cache' | 'read' | 'app',
  clock: { at: number; stampedAt: number; random: number },
): EngineAction {
  return {
    type: 'snapshot',
    snapshot,
    fresh: origin !== 'cache',
    fromRead: origin === 'read',
    ...clock,
  }
}
