import type { TurnEvent } from '../wire/contract/events'
import type { ExecutionStatus, HistorySnapshot, Message, MessagePart } from '../wire/contract/snapshot'
import { inBandError, PreviewChatError } from '../wire/contract/errors'
import { followUp } from './schedule'
import { selectActiveExecutionId } from './select'
import type { RelayMessage } from '../effects/tabRelay'
import { recordSupersedes } from './transcript'
import { applyTurnEvents, startTurn, type LiveTurn } from './fold'

/** The settings the reducer and the scheduler decide with (all times in ms). */
export interface EngineConfig {
  delegationCharLimit: number
  /** Backoff of read retries after failures. */
  retry: { baseMs: number; maxMs: number }
  /** Backoff of polling while a turn runs and no push channel is connected. */
  poll: { baseMs: number; maxMs: number }
  /** The shortest time between the starts of two reads (a refresh skips it). */
  minReadIntervalMs: number
  /** How long a posted message waits for the server to accept it before the tab recovers. */
  submitTimeoutMs: number
  /** How long a Stop asked before the execution id is known waits for it. */
  stopWaitMs: number
  /** How long this tab's own stream may stay silent before reads it defers run anyway. */
  streamSilenceMs: number
}

/** This tab's own turn request, from the POST until its stream ends. */
export interface OwnTurn {
  /** Tells this POST's events from a detached earlier one's. */
  token: number
  /** The message text; `null` for a resume. */
  text: string | null
  /** The suspension (tool call id) being answered, for a resume. */
  resuming: string | null
  /** `posting`: not accepted yet; `streaming`: accepted, its events arrive. */
  phase: 'posting' | 'streaming'
  /** When it was posted, and when its stream last delivered events (scheduler time). */
  since: number
  lastEventAt: number
  /** The server did not accept it within `submitTimeoutMs`: the tab recovers from the record. */
  timedOut: boolean
  /** Event batches applied so far (the other tabs follow them by this number). */
  batches: number
}

/** History reads: at most one in flight and one wanted behind it. */
export interface ReadState {
  inFlight: boolean
  /** A read is asked for (a notification, a signal, the end of a stream). */
  wanted: boolean
  /** The asked read skips the spacing between reads (`refresh()`). */
  urgent: boolean
  lastStartedAt: number
  /** Consecutive failed reads. */
  failures: number
  /** Consecutive polls without a push channel. */
  polls: number
  /** When a retry or a poll is due; `null`: none. */
  followUpAt: number | null
  /** No read before this (the server's `Retry-After`). */
  notBefore: number
}

/** A Stop asked and not yet settled by the record. */
export interface StopState {
  /** `null`: asked before `execution-started`, held until the id is known (bounded). */
  executionId: string | null
  /** The server accepted it: completion is what the record says. */
  accepted: boolean
  askedAt: number
}

/**
 * What the server can do, as far as this tab has learned (or the client's `server` option says).
 * `null`: not known yet. The spec's protocol keeps a turn alive when its POST closes and stops by
 * execution id; the released n8n 2.41 does neither (its turns begin without `execution-started`).
 */
export interface ServerTraits {
  keepsTurnOnDisconnect: boolean | null
  stopsByExecutionId: boolean | null
}

/** Everything the engine knows about one thread. Changed only by `reduce`. */
export interface EngineState {
  /** The session is listened to: it reads, follows push and streams. */
  active: boolean
  /** The last recorded snapshot applied (the TanStack Query cache holds the same object). */
  recorded: HistorySnapshot | null
  /** A fresh read has succeeded, or the thread is known to be new: the gate may open. */
  synced: boolean
  /** The last read answered 404: the thread does not exist or is not this user's. */
  notFound: boolean
  /** The live view of the running (or just ended) turn: this tab's own, or another tab's. */
  live: LiveTurn | null
  /** Ended live turns the record has not caught up with yet: shown until a read covers them. */
  settled: readonly LiveTurn[]
  own: OwnTurn | null
  stop: StopState | null
  reads: ReadState
  server: ServerTraits
  /** The push channel is connected; `lost`: it was, and notifications may have been missed. */
  push: { connected: boolean; lost: boolean }
  /** Following another tab's live turn: the last event batch taken, and a sync asked for. */
  relay: { executionId: string; seq: number } | null
  syncAsked: string | null
  /**
   * When (scheduler time) another tab said it posted a message whose turn has not begun. The gate
   * stays shut until that tab relays the turn, says the message was not taken up, or
   * `submitTimeoutMs` passes. Reads do not end it: a record may lag behind the other tab, and
   * which recorded turn is that message's cannot be told for sure (on n8n 2.41 this tab may know
   * a turn only by a stand-in id).
   */
  relayPosting: number | null
  /**
   * Suspensions this tab answered, hidden from `openSuspensions` until a fresh read: the record
   * still lists them until it catches up, and they must not be answered twice.
   */
  answered: readonly string[]
  /** This tab lost track of its own turn (a cut stream, no answer): cleared by a fresh read. */
  cut: boolean
  draft: string
  error: PreviewChatError | null
  readError: PreviewChatError | null
  lastSyncedAt: number | null
}

/** `at` is the scheduler's clock (`timers.now()`); `stampedAt` the wall clock (`now()`). */
export type EngineAction =
  | { type: 'activated'; at: number; pushConnected: boolean }
  /** The session stopped listening (no subscriber): what happens next is only in the record. */
  | { type: 'deactivated' }
  /** Time passed: deadlines due at `at` fire. */
  | { type: 'tick'; at: number }
  | { type: 'draft-changed'; draft: string }
  | { type: 'submit-started'; token: number; text: string; at: number }
  | { type: 'resume-started'; token: number; toolCallId: string; at: number }
  /**
   * The POST failed or was refused before the turn started; the draft stays. `recover`: the
   * server may have taken it anyway (no answer, a proxy's page), so the record decides.
   */
  | { type: 'submit-failed'; token: number; error: PreviewChatError; recover: boolean }
  /** `executionId` null: the server began the turn without announcing it (released n8n). */
  | {
      type: 'turn-started'
      token: number
      executionId: string | null
      sessionId: string
      at: number
      stampedAt: number
    }
  /** Events of this tab's live stream, in order (one network chunk's worth). */
  | { type: 'turn-events'; token: number; events: TurnEvent[]; at: number; stampedAt: number }
  /** This tab's stream ended: by the server (`cut` false) or before a terminal event. */
  | { type: 'stream-ended'; token: number; cut: boolean }
  | { type: 'relay-received'; message: RelayMessage; at: number; stampedAt: number }
  | { type: 'read-wanted'; urgent: boolean }
  /** A push notification about this thread: a read is wanted, and the channel works. */
  | { type: 'push-message' }
  | { type: 'read-started'; at: number }
  /** A snapshot reached the cache: a read's answer (`fromRead`) or the app's `setQueryData`. */
  | {
      type: 'snapshot'
      snapshot: HistorySnapshot
      fresh: boolean
      fromRead: boolean
      at: number
      stampedAt: number
      random: number
    }
  | { type: 'read-failed'; error: PreviewChatError; at: number; random: number }
  | { type: 'read-cancelled' }
  | { type: 'push-changed'; connected: boolean; at: number; random: number }
  | { type: 'stop-requested'; executionId: string | null; at: number }
  | { type: 'stop-answered'; executionId: string; cancelRequested: boolean }
  | { type: 'stop-failed'; error: PreviewChatError }
  | { type: 'error-cleared' }

const idleReads: ReadState = {
  inFlight: false,
  wanted: false,
  urgent: false,
  lastStartedAt: Number.NEGATIVE_INFINITY,
  failures: 0,
  polls: 0,
  followUpAt: null,
  notBefore: Number.NEGATIVE_INFINITY,
}

export function initialEngineState(
  init: { draft?: string; isNew?: boolean; server?: Partial<ServerTraits> } = {},
): EngineState {
  return {
    active: false,
    recorded: null,
    synced: init.isNew ?? false,
    notFound: false,
    live: null,
    settled: [],
    own: null,
    stop: null,
    reads: idleReads,
    push: { connected: false, lost: false },
    relay: null,
    syncAsked: null,
    relayPosting: null,
    answered: [],
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

/** The one reducer: every change of a session's state is one of these actions. */
export function reduce(
  state: EngineState,
  action: EngineAction,
  config: EngineConfig,
): EngineState {
  switch (action.type) {
    case 'activated': {
      // Spec: "After a reload or disconnect, the client reads the recorded transcript."
      const wanted = !state.synced || state.cut || selectActiveExecutionId(state) !== null
      return {
        ...state,
        active: true,
        push: { connected: action.pushConnected, lost: false },
        reads: { ...idleReads, wanted, lastStartedAt: state.reads.lastStartedAt },
      }
    }
    case 'deactivated':
      return {
        ...state,
        active: false,
        synced: false,
        own: null,
        stop: null,
        relay: null,
        syncAsked: null,
        relayPosting: null,
        reads: { ...idleReads, lastStartedAt: state.reads.lastStartedAt },
      }
    case 'tick':
      return applyDeadlines(state, action.at, config)
    case 'draft-changed':
      return { ...state, draft: action.draft }
    case 'submit-started':
    case 'resume-started': {
      const own: OwnTurn = {
        token: action.token,
        text: action.type === 'submit-started' ? action.text : null,
        resuming: action.type === 'resume-started' ? action.toolCallId : null,
        phase: 'posting',
        since: action.at,
        lastEventAt: action.at,
        timedOut: false,
        batches: 0,
      }
      return { ...state, own, error: null }
    }
    case 'submit-failed': {
      if (state.own?.token !== action.token) return state
      // Read either way: a refusal such as turn_already_running means another turn runs.
      return wantRead({
        ...state,
        own: null,
        error: action.error,
        cut: state.cut || action.recover,
      })
    }
    case 'turn-started':
      return startOwnTurn(state, action)
    case 'turn-events': {
      const { own, live } = state
      if (own?.token !== action.token || own.phase !== 'streaming' || !live || live.ended)
        return state
      const next = applyTurnEvents(live, action.events, turnOptions(config, action.stampedAt))
      const withLive = { ...state, live: adoptAnnouncedId(next, action.events) }
      if (!next.ended)
        return { ...withLive, own: { ...own, lastEventAt: action.at, batches: own.batches + 1 } }
      // The turn's terminal event: this tab's part is over; the record says the rest.
      const failed = action.events.find((event) => event.type === 'error')
      const error = failed?.type === 'error' ? inBandError(failed) : state.error
      return wantRead({ ...withLive, live: underStop(withLive.live, state.stop), own: null, error })
    }
    case 'stream-ended': {
      if (state.own?.token !== action.token) return state
      const ended = { ...state, own: null }
      return wantRead(action.cut ? { ...ended, cut: true } : ended)
    }
    case 'relay-received':
      return receiveRelay(state, action, turnOptions(config, action.stampedAt))
    case 'read-wanted':
      return wantRead(state, action.urgent)
    case 'push-message':
      return wantRead({ ...state, reads: { ...state.reads, polls: 0 } })
    case 'read-started':
      return {
        ...state,
        reads: {
          ...state.reads,
          inFlight: true,
          wanted: false,
          urgent: false,
          followUpAt: null,
          lastStartedAt: action.at,
        },
      }
    case 'read-cancelled':
      return { ...state, reads: { ...state.reads, inFlight: false } }
    case 'snapshot':
      return applySnapshot(state, action, config)
    case 'read-failed':
      return failRead(state, action, config)
    case 'push-changed': {
      const push = {
        connected: action.connected,
        lost: state.push.lost || (state.push.connected && !action.connected),
      }
      if (!action.connected) return followUp({ ...state, push }, action.at, action.random, config)
      // Notifications sent while the channel was down are lost: read once. Polling can stop
      // (its backoff is kept: a channel that drops again at once must not restart it).
      const connected = { ...state, push: { connected: true, lost: false } }
      const next = followUp(connected, action.at, action.random, config)
      return push.lost ? wantRead(next) : next
    }
    case 'stop-requested':
      return {
        ...state,
        stop: { executionId: action.executionId, accepted: false, askedAt: action.at },
        error: null,
      }
    case 'stop-answered': {
      if (state.stop?.executionId !== action.executionId) return state
      const stop = action.cancelRequested ? { ...state.stop, accepted: true } : null
      const { live } = state
      // A turn whose end raced the answer: cancelled if the Stop was taken, else as it ended.
      const settled =
        live?.ended &&
        live.executionId === action.executionId &&
        live.assistant.executionStatus === 'running'
          ? withStatus(live, stop ? 'cancelled' : 'success')
          : underStop(live, stop)
      return wantRead({ ...state, stop, live: settled })
    }
    case 'stop-failed': {
      // No Stop route (an HTML 404): the server stops a turn only when its POST closes.
      const server = action.error.routeMissing
        ? { ...state.server, stopsByExecutionId: false }
        : state.server
      return wantRead({ ...state, stop: null, error: action.error, server })
    }
    case 'error-cleared':
      return { ...state, error: null }
  }
}

const turnOptions = (config: EngineConfig, stampedAt: number) => ({
  delegationCharLimit: config.delegationCharLimit,
  now: () => stampedAt,
})

function wantRead(state: EngineState, urgent = false): EngineState {
  if (!state.active) return state
  return { ...state, reads: { ...state.reads, wanted: true, urgent: state.reads.urgent || urgent } }
}

/** A finished live turn that the record does not hold yet stays on screen (never vanishes). */
function setAside(state: EngineState): readonly LiveTurn[] {
  const { live, recorded } = state
  if (!live?.ended || (recorded && recordSupersedes(recorded, live))) return state.settled
  return [...state.settled, live]
}

function startOwnTurn(
  state: EngineState,
  action: Extract<EngineAction, { type: 'turn-started' }>,
): EngineState {
  const { own } = state
  if (own?.token !== action.token || own.phase !== 'posting') return state
  const executionId = action.executionId ?? `unannounced:${action.token}`
  const resumed = own.resuming
    ? state.recorded?.openSuspensions.find((s) => s.toolCallId === own.resuming)
    : undefined
  const payload = resumed?.suspendPayload as { toolName?: unknown; input?: unknown } | undefined
  const live = startTurn({
    executionId,
    sessionId: action.sessionId,
    createdAt: new Date(action.stampedAt).toISOString(),
    ...(own.text !== null && { message: own.text }),
    ...(own.resuming &&
      typeof payload?.toolName === 'string' && {
        resumes: { toolCallId: own.resuming, toolName: payload.toolName, input: payload.input },
      }),
  })
  // The draft is cleared when its turn is accepted, unless the person has edited it since.
  const draft = own.text !== null && state.draft === own.text ? '' : state.draft
  const stop =
    state.stop?.executionId === null && action.executionId !== null
      ? { ...state.stop, executionId: action.executionId }
      : state.stop
  return {
    ...state,
    settled: setAside(state),
    live,
    draft,
    stop,
    own: { ...own, phase: 'streaming', lastEventAt: action.at, timedOut: false },
    // The spec's servers announce every turn; one that does not speaks the released protocol.
    server: learn(state.server, action.executionId !== null),
    answered: own.resuming ? [...state.answered, own.resuming] : state.answered,
    relay: null,
    cut: false,
    notFound: false,
    error: null,
  }
}

/**
 * A turn begun without `execution-started` (released n8n) goes by a stand-in id until `done`
 * names the execution; its messages then take the ids the record will have.
 */
const isUnannounced = (turn: LiveTurn) => turn.executionId.startsWith('unannounced:')

function adoptAnnouncedId(turn: LiveTurn, events: readonly TurnEvent[]): LiveTurn {
  if (!isUnannounced(turn)) return turn
  const done = events.find((event) => event.type === 'done')
  const executionId = done?.type === 'done' ? done.executionId : undefined
  return executionId ? renamed(turn, executionId) : turn
}

/**
 * The same for a turn whose stream never named it (cut, or still running): the record's last
 * message with the person's text is this turn's, whose id the live view then takes.
 */
function adoptRecordedId(turn: LiveTurn, snapshot: HistorySnapshot): LiveTurn {
  const text = turn.user?.content[0]
  if (!isUnannounced(turn) || text?.type !== 'text') return turn
  const recorded = snapshot.messages.findLast(
    (message) =>
      message.role === 'user' &&
      message.content.length === 1 &&
      message.content[0]?.type === 'text' &&
      message.content[0].text === text.text,
  )
  return recorded ? renamed(turn, recorded.executionId) : turn
}

function renamed(turn: LiveTurn, executionId: string): LiveTurn {
  const rename = (message: Message): Message => ({
    ...message,
    id: `${executionId}:${message.role}`,
    executionId,
  })
  return {
    ...turn,
    executionId,
    user: turn.user && rename(turn.user),
    assistant: rename(turn.assistant),
  }
}

/**
 * A turn that ends with `done` while this tab's Stop of it is pending did not end by itself: its
 * status waits for the Stop's answer (`running`), or is `cancelled` once the Stop was taken, as
 * the record will say (spec: "Recorded state determines completion").
 */
function underStop<T extends LiveTurn | null>(live: T, stop: StopState | null): T {
  if (!live?.ended || stop?.executionId !== live.executionId) return live
  if (live.assistant.executionStatus !== 'success' || live.assistant.content.some(isSuspended))
    return live
  return withStatus(live, stop.accepted ? 'cancelled' : 'running') as T
}

const isSuspended = (part: MessagePart) =>
  part.type === 'tool-call' && part.suspendPayload !== undefined

function withStatus(turn: LiveTurn, status: ExecutionStatus): LiveTurn {
  return {
    ...turn,
    user: turn.user && { ...turn.user, executionStatus: status },
    assistant: { ...turn.assistant, executionStatus: status },
  }
}

/** Fills in what the server showed of itself, keeping what the client's options said. */
function learn(server: ServerTraits, speaksSpec: boolean): ServerTraits {
  if (server.keepsTurnOnDisconnect !== null && server.stopsByExecutionId !== null) return server
  return {
    keepsTurnOnDisconnect: server.keepsTurnOnDisconnect ?? speaksSpec,
    stopsByExecutionId: server.stopsByExecutionId ?? speaksSpec,
  }
}

function applyDeadlines(state: EngineState, at: number, config: EngineConfig): EngineState {
  let next = state
  const { own, stop } = state
  if (own?.phase === 'posting' && !own.timedOut && at >= own.since + config.submitTimeoutMs) {
    // The server neither accepted nor refused: it may have taken the turn. The stream stays open
    // (closing it could cancel the turn on some servers); the record decides, the draft stays.
    const error = new PreviewChatError(
      'timeout',
      `The server did not confirm the message within ${config.submitTimeoutMs} ms. Your draft is kept; ` +
        'the chat shows what the server recorded and lets you send again once nothing runs.',
    )
    next = wantRead({ ...next, own: { ...own, timedOut: true }, cut: true, error })
  }
  if (stop?.executionId === null && at >= stop.askedAt + config.stopWaitMs) {
    next = wantRead({ ...next, stop: null })
  }
  if (state.relayPosting !== null && at >= state.relayPosting + config.submitTimeoutMs) {
    // The posting tab went quiet (closed, or its server never answered): the record decides.
    next = wantRead({ ...next, relayPosting: null })
  }
  return next
}

function receiveRelay(
  state: EngineState,
  { message, at }: Extract<EngineAction, { type: 'relay-received' }>,
  options: ReturnType<typeof turnOptions>,
): EngineState {
  // Held even while this tab posts too: if its own message fails, the other one may still run.
  if (message.kind === 'posting') {
    // Not taken up: the server may still have recorded it (no answer), so read.
    return message.active
      ? { ...state, relayPosting: at }
      : wantRead({ ...state, relayPosting: null })
  }
  // This tab's own stream wins; a tab follows another tab's turn only when it streams none.
  if (state.own || message.kind === 'sync') return state
  if (message.kind === 'turn') {
    const { turn } = message
    // Never a turn the record has already caught up with (the record has that message's turn).
    if (state.recorded && recordSupersedes(state.recorded, turn))
      return { ...state, relayPosting: null }
    const replacing = state.live?.executionId !== turn.executionId
    return {
      ...state,
      settled: replacing ? setAside(state) : state.settled,
      live: turn,
      relay: { executionId: turn.executionId, seq: message.seq },
      syncAsked: null,
      relayPosting: null,
    }
  }
  const { relay, live } = state
  if (
    live?.executionId === message.executionId &&
    relay?.executionId === message.executionId &&
    relay.seq === message.seq - 1
  ) {
    const next = live.ended ? live : applyTurnEvents(live, message.events, options)
    return { ...state, live: underStop(next, state.stop), relay: { ...relay, seq: message.seq } }
  }
  // Joined mid-turn or missed a batch: ask the streaming tab for the whole turn (once).
  return state.syncAsked === message.executionId
    ? state
    : { ...state, syncAsked: message.executionId }
}

function applySnapshot(
  state: EngineState,
  action: Extract<EngineAction, { type: 'snapshot' }>,
  config: EngineConfig,
): EngineState {
  const { snapshot } = action
  const reads = action.fromRead ? { ...state.reads, inFlight: false, failures: 0 } : state.reads
  const ownStreaming = state.own?.phase === 'streaming'
  const live = state.live && adoptRecordedId(state.live, snapshot)
  // Drop the live overlay once the record has caught up with it: while this tab still streams,
  // only when the record shows the turn ended (its own deltas are newer than any batch).
  const liveEndedInRecord = live !== null && recordEnded(snapshot, live.executionId)
  const dropLive =
    live !== null &&
    (recordSupersedes(snapshot, live) ||
      // A turn the server never named is in the record under its real id once it ended.
      (action.fromRead && live.ended && isUnannounced(live))) &&
    (!ownStreaming || liveEndedInRecord)
  let next: EngineState = {
    ...state,
    recorded: snapshot,
    reads,
    live: dropLive ? null : live,
    settled: state.settled.filter(
      (turn) => !recordSupersedes(snapshot, turn) && !(action.fromRead && isUnannounced(turn)),
    ),
    // The record shows this tab's turn ended: its stream has nothing more to say.
    own: ownStreaming && liveEndedInRecord ? null : state.own,
    // A Stop of a turn that went by a stand-in id names it as the record does.
    stop:
      state.stop && state.live && live && state.stop.executionId === state.live.executionId
        ? { ...state.stop, executionId: live.executionId }
        : state.stop,
    server: snapshot.derived ? learn(state.server, false) : state.server,
  }
  if (!action.fresh) return next
  // Spec: "Recorded state determines completion." A Stop settles once its execution is not the
  // active one any more.
  let { stop } = next
  if (stop?.executionId) {
    if (snapshot.activeExecutionId !== stop.executionId) stop = null
  } else if (stop && next.own?.phase !== 'posting') {
    // A Stop held for a message whose stream ended (or timed out) before naming its execution:
    // the record names what runs now, or shows that nothing does.
    const active = snapshot.activeExecutionId
    stop = active ? { ...stop, executionId: active } : null
  }
  next = {
    ...next,
    stop,
    answered: [],
    synced: true,
    notFound: false,
    cut: false,
    readError: null,
    lastSyncedAt: action.stampedAt,
  }
  return action.fromRead ? followUp(next, action.at, action.random, config) : next
}

function recordEnded(snapshot: HistorySnapshot, executionId: string): boolean {
  const recorded = snapshot.messages.find((message) => message.id === `${executionId}:assistant`)
  return recorded !== undefined && recorded.executionStatus !== 'running'
}

function failRead(
  state: EngineState,
  action: Extract<EngineAction, { type: 'read-failed' }>,
  config: EngineConfig,
): EngineState {
  const { error } = action
  const failures = state.reads.failures + 1
  // The server's Retry-After, bounded by the longest backoff (a stale header must not stall us).
  const notBefore =
    error.retryAfterMs === undefined
      ? state.reads.notBefore
      : action.at + Math.min(error.retryAfterMs, config.retry.maxMs)
  const reads = { ...state.reads, inFlight: false, failures, notBefore }
  // A thread this tab just posted to may not be recorded yet (n8n 2.41 answers 404 until the
  // first output): not found is an answer only when this tab knows of no turn there.
  const justPosted = state.own !== null || state.live !== null || state.settled.length > 0
  // A page instead of the API's JSON is a wrong URL or a proxy, not a missing thread.
  if (error.code === 'not_found' && !error.routeMissing && !justPosted) {
    // An answer, not a failure to retry.
    return {
      ...state,
      reads: { ...reads, followUpAt: null },
      notFound: true,
      synced: true,
      cut: false,
      readError: error,
    }
  }
  return followUp({ ...state, reads, readError: error }, action.at, action.random, config)
}
