/**
 * The one reducer: every change of a session's state is one of the actions of `model.ts`, and
 * what the session must do about it comes back as commands. Each action has its handler in a
 * slice (`slices/`); this file routes, and keeps the draft's storage in step.
 */
import type { ThreadKey } from '../wire/contract/ids'
import type { HistorySnapshot } from '../wire/contract/snapshot'
import type { LiveTurn } from './fold'
import type {
  BaseAction,
  EngineAction,
  EngineConfig,
  EnginePart,
  EngineState,
  Handler,
  Reducer,
  ServerTraits,
  Step,
} from './model'
import { readsSettled } from './derive'
import { draftFate } from './draft'
import { alarmAfter } from './schedule'
import { reported, settled, step, wantRead } from './slices/common'
import {
  activated,
  deactivated,
  disposed,
  idleReads,
  mounted,
  prefetchRequested,
  tick,
} from './slices/lifecycle'
import { postFailed, requestTurn, streamEnded, turnEvents, turnOpened } from './slices/ownTurn'
import { pushChanged, pushMessage, readCancelled, readFailed, readStarted } from './slices/reads'
import { relayPart } from './slices/relay'
import { releasedPart } from './slices/released'
import { applySnapshot } from './slices/snapshot'
import { requestStop, runsAnswered, runsFailed, stopAnswered, stopFailed } from './slices/stop'
import { explain } from '../wire/contract/explain'

/** What `initialEngineState` takes: the thread, this tab, and what this browser kept. */
export interface EngineInit {
  key: ThreadKey
  /** This tab's id on the relay between tabs. */
  tab: string
  draft?: string
  /** The `messageId` the kept draft was sent with, its fate not known (`EngineState.draftSentAs`). */
  draftSentAs?: string | null
  /** The app minted this thread id and says it has no history (`SessionOptions.isNew`). */
  isNew?: boolean
  /**
   * What the host read from this browser's storage: a session of this thread was followed here
   * before, so an `isNew` hint is stale (`EngineState.staleHint`). Absent: not known (a server).
   */
  knownHere?: boolean
  /** A running turn's live view kept across a reload: it stands until a record covers it. */
  live?: LiveTurn | null
  server?: Partial<ServerTraits>
}

export function initialEngineState(init: EngineInit): EngineState {
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
    liveEndedAfterRead: 0,
    settled: [],
    own: null,
    streams: [],
    stop: null,
    reads: idleReads,
    push: { connected: false, lost: false },
    othersPosting: false,
    presumedEnded: null,
    answered: [],
    watching: [],
    reported: [],
    cut: false,
    draft: init.draft ?? '',
    draftSentAs: init.draft ? (init.draftSentAs ?? null) : null,
    error: null,
    readError: null,
    lastSyncedAt: null,
    dedupesMessages: null,
    wakeAt: null,
    recordedHere: false,
    appRecordAfterRead: null,
    server: {
      keepsTurnOnDisconnect: init.server?.keepsTurnOnDisconnect ?? null,
      stopsByExecutionId: init.server?.stopsByExecutionId ?? null,
    },
    // The hint is taken all the same (`synced`); a stale one is read on activation (`activated`).
    staleHint: init.isNew && init.knownHere,
  }
}

/**
 * The state a server render of a new session shows, and hydration expects: what a server has too —
 * the cache as the app filled it — and not the draft, nor what this browser kept (a transcript
 * `persist` restored, a running turn's live text).
 */
export function serverRenderState(
  init: EngineInit,
  mounted: Extract<EngineAction, { type: 'mounted' }>,
  config: EngineConfig,
  reducer: Reducer,
): EngineState {
  const { cached } = mounted
  const shared = cached.kind === 'snapshot' && !cached.keptHere ? cached : { kind: 'none' as const }
  const initial = initialEngineState({ ...init, draft: '', live: null })
  return reducer(initial, { ...mounted, cached: shared }, config).state
}

/**
 * Each action's handler, in its slice, but those of a part (the relay's `relay-received`, the
 * queue's actions): each part takes its own by wrapping the engine (`EnginePart.wrap`).
 */
const handlers: {
  [T in BaseAction['type']]?: Handler<T>
} = {
  mounted,
  activated,
  deactivated,
  disposed,
  'draft-changed': (state, { draft }) => step({ ...state, draft }),
  'error-cleared': (state) => step({ ...state, error: null }),
  // What the server offers, said by the server (its message dedupe is the engine's to use).
  'capabilities-heard': turnOpened,
  'submit-requested': requestTurn,
  'resume-requested': requestTurn,
  'turn-opened': turnOpened,
  'post-failed': postFailed,
  'turn-events': turnEvents,
  'stream-ended': streamEnded,
  'read-wanted': (state, { urgent, request }) =>
    waitForReads(step(wantRead(state, urgent)), request),
  // Only before the session is listened to and has read: after that, reads are the scheduler's.
  // (A disposed session routes no action at all.)
  'prefetch-requested': (state, action) =>
    waitForReads(prefetchRequested(state, action), action.request),
  'listener-threw': (state, { listener, message }) =>
    step(state, {
      type: 'warn',
      message: `${listener === 'state' ? 'A state' : 'An onTurnEnd'} listener threw: ${message}${explain('listener-threw')}`,
    }),
  'push-message': pushMessage,
  'read-started': readStarted,
  'read-cancelled': readCancelled,
  snapshot: applySnapshot,
  'read-failed': readFailed,
  'push-changed': pushChanged,
  'stop-requested': requestStop,
  'stop-answered': stopAnswered,
  'stop-failed': stopFailed,
  'runs-answered': runsAnswered,
  'runs-failed': runsFailed,
}

/**
 * `refresh()` and `prefetch()` wait for reads to settle: their request joins `reads.waiters`,
 * settled by `postStep` once no read is in flight nor, while the session is listened to, wanted.
 */
function waitForReads(done: Step, request: number | undefined): Step {
  const { reads } = done.state
  if (request === undefined) return done
  return {
    ...done,
    state: { ...done.state, reads: { ...reads, waiters: [...reads.waiters, request] } },
  }
}

/**
 * The engine's decisions with `parts` wrapped around them, in the order given (each wraps what the
 * ones before it made: `EnginePart.wrap`), without the post-step. An action that neither the
 * engine nor a part takes changes nothing, and says so (a part the client lacks: a relay message
 * without the relay's part). A disposed session takes nothing more: its requests were aborted, its outcomes given, and
 * a call made now is answered at once.
 */
export function decideWith(parts: readonly EnginePart[] = []): Reducer {
  const table: typeof handlers = {
    ...handlers,
    tick: (state, { at }, config) => tick(state, at, config),
  }
  const engine: Reducer = (state, action, config) => {
    if (state.disposed) return afterDispose(state, action)
    const handler = table[action.type as keyof typeof table] as
      Handler<EngineAction['type']> | undefined
    if (handler) return readAnswered(handler(state, action, config), action)
    // A part's action reaches only a session whose client has that part: said once.
    return step(state, { type: 'warn', message: noPart(action.type) })
  }
  return parts.reduce<Reducer>((inner, part) => part.wrap(inner), engine)
}

/** A read of the record answered (its snapshot, or "not found"): reported, for the parts. */
function readAnswered(done: Step, action: EngineAction): Step {
  const answered =
    (action.type === 'snapshot' && action.fresh && action.fromRead) ||
    (action.type === 'read-failed' && done.state.notFound)
  return answered ? reported(done, { type: 'read-answered' }) : done
}

const noPart = (type: string) =>
  `An action of type "${type}" met no part of the engine that takes it.${explain('no-part')}`

/** The engine's decisions without a part (`decideWith()`). */
export const decide: Reducer = decideWith()

/**
 * The one post-step, what every step owes whatever decided it (the engine's slices or an
 * extension around them): the draft and the live turn kept in step with storage, `refresh()` and
 * `prefetch()` calls settled once reads settle, and the alarm set for the next deadline or read
 * (`set-alarm` when that time comes earlier, appears or goes — never only to move it later — its
 * `tick` doing what is due: `alarmAfter`). `before` is the state the action met.
 */
export function postStep(
  before: EngineState,
  next: Step,
  action: EngineAction,
  config: EngineConfig,
  parts: readonly EnginePart[] = [],
): Step {
  if (before.disposed) return next
  let after = draftFate(before, next.state, action, next.events)
  const commands = [...next.commands]
  const { draft, live, draftSentAs: sentAs } = after
  if (draft !== before.draft || sentAs !== before.draftSentAs)
    commands.push({ type: 'store-draft', draft, sentAs })
  // A read on its way when the turn ended cannot know how it ended (a stand-in turn stays).
  if (live?.ended && !before.live?.ended)
    after = { ...after, liveEndedAfterRead: after.reads.count }
  if (live !== before.live && config.keepLive) {
    commands.push({ type: 'keep-live', turn: live })
    after = { ...after, kept: after.kept && live === before.live }
  }
  // A read on its way is waited for even where nobody listens: a prefetch's is the first read
  // the page waits for; a session disposed or gone quiet has none [R-READ-PREFETCH-SETTLES].
  if (after.reads.waiters.length > 0 && !after.reads.inFlight && readsSettled(after)) {
    commands.push({ type: 'settle-refresh', requests: after.reads.waiters })
    after = { ...after, reads: { ...after.reads, waiters: [] } }
  }
  const wake = alarmAfter(after, config, parts)
  if (wake !== undefined) {
    commands.push({ type: 'set-alarm', at: wake })
    after = { ...after, wakeAt: wake }
  }
  return after === next.state && commands.length === next.commands.length
    ? next
    : { ...next, state: after, commands }
}

/**
 * The reducer the runner (and a trace's replay) uses, assembled from the parts the client uses
 * (`decideWith`: the released platform's, the relay's, the queue's, in that order, where it has
 * them), every step ended by `postStep`.
 */
export function reducerWith(parts: readonly EnginePart[] = []): Reducer {
  const decided = decideWith(parts)
  return (state, action, config) =>
    postStep(state, decided(state, action, config), action, config, parts)
}

/**
 * Every part of the engine but the queue, as `createPreviewChatClient` lists them: the released
 * platform's, then the relay's.
 */
export const everyPart: readonly EnginePart[] = [releasedPart, relayPart]

/**
 * `reduce(state, action)` → the next state and the commands to perform, with every part
 * (`everyPart`: what tests and a trace's replay use; a session runs what its client assembled).
 * Pure; never throws.
 */
export const reduce: Reducer = /* @__PURE__ */ reducerWith(everyPart)

function afterDispose(state: EngineState, action: EngineAction): Step {
  if (
    (action.type === 'read-wanted' || action.type === 'prefetch-requested') &&
    action.request !== undefined
  )
    return step(state, { type: 'settle-refresh', requests: [action.request] })
  if (action.type === 'submit-requested' || action.type === 'resume-requested')
    return settled(action.request, { outcome: 'busy' }, step(state))
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
  unchanged = false,
): EngineAction {
  return {
    type: 'snapshot',
    snapshot,
    fresh: origin !== 'cache',
    fromRead: origin === 'read',
    ...(unchanged && { unchanged }),
    ...clock,
  }
}
