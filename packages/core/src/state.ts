import type { TurnEvent } from './contract/events'
import type { HistorySnapshot, Message, Suspension } from './contract/snapshot'
import { inBandError, type PreviewChatError } from './errors'
import { composeTranscript, recordSupersedes } from './transcript'
import { applyTurnEvents, startTurn, type LiveTurn, type TurnOptions } from './turn'

/**
 * Exactly one at a time:
 * - `idle`: nothing runs; a message may be sent.
 * - `submitting`: the message is posted; the server has not accepted it yet.
 * - `streaming`: this tab reads the turn's live stream.
 * - `recovering`: this tab does not know the thread's state (first read pending, or its live
 *   stream was cut) and reads the recorded transcript.
 * - `following`: a turn runs that this tab has no live stream of (another tab's, or one recovered
 *   after a reload); push notifications and reads keep the transcript current.
 * - `stopping`: Stop was asked; the turn runs until the record shows it ended.
 */
export type SessionStatus =
  'idle' | 'submitting' | 'streaming' | 'recovering' | 'following' | 'stopping'

/** Everything the engine knows about one thread. Changed only by `reduce`. */
export interface EngineState {
  /** The last recorded snapshot applied (the TanStack Query cache holds the same object). */
  recorded: HistorySnapshot | null
  /** A fresh read has succeeded, or the thread is known to be new: the gate may open. */
  synced: boolean
  /** The last read answered 404: the thread does not exist or is not this user's. */
  notFound: boolean
  /** This tab's live view of a turn, shown over the record until the record catches up. */
  live: LiveTurn | null
  /** The text of a submission whose POST has not been answered with `execution-started` yet. */
  submitting: string | null
  /** This tab's live stream is open. */
  streaming: boolean
  /** The suspension (tool call id) whose answer is being posted. */
  resuming: string | null
  /**
   * Suspensions this tab answered, hidden from `openSuspensions` until a fresh read: the record
   * still lists them until it catches up, and they must not be answered twice.
   */
  answered: readonly string[]
  /** The live stream was cut; cleared by the next successful read. */
  cut: boolean
  /** A Stop asked and not yet settled by the record. `executionId` null: held until it is known. */
  stop: { executionId: string | null; accepted: boolean } | null
  draft: string
  error: PreviewChatError | null
  readError: PreviewChatError | null
  lastSyncedAt: number | null
}

export type EngineAction =
  | { type: 'draft-changed'; draft: string }
  | { type: 'submit-started'; text: string }
  /** A suspension is being answered (its tool call id). */
  | { type: 'resume-started'; toolCallId: string }
  /** The POST failed or was refused before `execution-started`; the draft stays. */
  | { type: 'submit-failed'; error: PreviewChatError }
  | { type: 'turn-started'; executionId: string; sessionId: string; message?: string; at: string }
  /** Events of this tab's live stream, in order (one network chunk's worth). */
  | { type: 'turn-events'; events: TurnEvent[] }
  /** Another tab's live turn (whole, when joining), then its events batch by batch. */
  | { type: 'relayed-turn'; turn: LiveTurn }
  | { type: 'relayed-events'; events: TurnEvent[] }
  /** The live stream closed without a terminal event, or failed while being read. */
  | { type: 'stream-cut' }
  | { type: 'stream-closed' }
  /** A read answered; `fresh` is false for a snapshot restored from the cache. */
  | { type: 'snapshot'; snapshot: HistorySnapshot; fresh: boolean; at: number }
  | { type: 'read-failed'; error: PreviewChatError }
  | { type: 'stop-requested'; executionId: string | null }
  | { type: 'stop-answered'; executionId: string; cancelRequested: boolean }
  | { type: 'stop-failed'; error: PreviewChatError }
  /** A Stop held for an execution id that never came. */
  | { type: 'stop-abandoned' }
  /** The session stopped listening (no subscriber): what happens next is only in the record. */
  | { type: 'paused' }
  | { type: 'error-cleared' }

export function initialEngineState(init: { draft?: string; isNew?: boolean } = {}): EngineState {
  return {
    recorded: null,
    synced: init.isNew ?? false,
    notFound: false,
    live: null,
    submitting: null,
    streaming: false,
    resuming: null,
    answered: [],
    cut: false,
    stop: null,
    draft: init.draft ?? '',
    error: null,
    readError: null,
    lastSyncedAt: null,
  }
}

/** The one reducer: every change of a session's state is one of these actions. */
export function reduce(
  state: EngineState,
  action: EngineAction,
  options: TurnOptions,
): EngineState {
  switch (action.type) {
    case 'draft-changed':
      return { ...state, draft: action.draft }
    case 'submit-started':
      return { ...state, submitting: action.text, error: null }
    case 'resume-started':
      return { ...state, submitting: '', resuming: action.toolCallId, error: null }
    case 'submit-failed':
      return { ...state, submitting: null, resuming: null, error: action.error }
    case 'turn-started': {
      const live = startTurn({
        executionId: action.executionId,
        sessionId: action.sessionId,
        createdAt: action.at,
        ...(action.message !== undefined && { message: action.message }),
      })
      // The draft is cleared when its turn is accepted, unless the person has edited it since.
      const draft = state.submitting !== null && state.draft === state.submitting ? '' : state.draft
      const stop =
        state.stop && state.stop.executionId === null
          ? { ...state.stop, executionId: action.executionId }
          : state.stop
      const answered = state.resuming ? [...state.answered, state.resuming] : state.answered
      return {
        ...state,
        live,
        draft,
        stop,
        answered,
        resuming: null,
        submitting: null,
        streaming: true,
        cut: false,
        notFound: false,
      }
    }
    case 'turn-events': {
      if (!state.live || state.live.ended) return state
      const live = applyTurnEvents(state.live, action.events, options)
      if (!live.ended) return { ...state, live }
      const failed = action.events.find((event) => event.type === 'error')
      const error = failed?.type === 'error' ? inBandError(failed) : state.error
      return { ...state, live, error, streaming: false }
    }
    case 'relayed-turn':
      // This tab's own stream wins; a tab follows another tab's turn only when it streams none,
      // and never one its record has already caught up with.
      if (state.streaming || state.submitting !== null) return state
      if (state.recorded && recordSupersedes(state.recorded, action.turn)) return state
      return { ...state, live: action.turn }
    case 'relayed-events':
      if (state.streaming || !state.live || state.live.ended) return state
      return { ...state, live: applyTurnEvents(state.live, action.events, options) }
    case 'stream-cut':
      return { ...state, streaming: false, submitting: null, cut: true }
    case 'stream-closed':
      return { ...state, streaming: false, submitting: null }
    case 'snapshot':
      return applySnapshot(state, action.snapshot, action.fresh, action.at)
    case 'read-failed':
      return action.error.code === 'not_found'
        ? { ...state, notFound: true, synced: true, cut: false, readError: action.error }
        : { ...state, readError: action.error }
    case 'stop-requested':
      return { ...state, stop: { executionId: action.executionId, accepted: false }, error: null }
    case 'stop-answered':
      if (state.stop?.executionId !== action.executionId) return state
      return { ...state, stop: action.cancelRequested ? { ...state.stop, accepted: true } : null }
    case 'stop-failed':
      return { ...state, stop: null, error: action.error }
    case 'stop-abandoned':
      return state.stop?.executionId === null ? { ...state, stop: null } : state
    case 'paused':
      return {
        ...state,
        synced: false,
        streaming: false,
        submitting: null,
        resuming: null,
        stop: null,
      }
    case 'error-cleared':
      return { ...state, error: null }
  }
}

function applySnapshot(
  state: EngineState,
  snapshot: HistorySnapshot,
  fresh: boolean,
  at: number,
): EngineState {
  // Drop the live overlay once the record has caught up with it (and never while this tab still
  // streams: its own deltas are newer than any batch).
  const live =
    state.live && !state.streaming && recordSupersedes(snapshot, state.live) ? null : state.live
  if (!fresh) return { ...state, recorded: snapshot, live }
  // Spec: "Recorded state determines completion." A Stop settles once its execution is not the
  // active one any more.
  const stopId = state.stop?.executionId
  const stop = stopId && snapshot.activeExecutionId !== stopId ? null : state.stop
  return {
    ...state,
    recorded: snapshot,
    live,
    stop,
    answered: [],
    synced: true,
    notFound: false,
    cut: false,
    readError: null,
    lastSyncedAt: at,
  }
}

/** The execution that runs now, as far as this tab knows. */
export function selectActiveExecutionId(state: EngineState): string | null {
  const { live, recorded } = state
  if (live && !live.ended) return live.executionId
  const recordedId = recorded?.activeExecutionId ?? null
  // This tab saw the turn end live; a record that still calls it active predates that end.
  return live && recordedId === live.executionId ? null : recordedId
}

export function selectStatus(state: EngineState): SessionStatus {
  if (state.stop) return 'stopping'
  if (state.submitting !== null) return 'submitting'
  if (state.streaming) return 'streaming'
  if (state.cut || !state.synced) return 'recovering'
  return selectActiveExecutionId(state) ? 'following' : 'idle'
}

/** The public view of a session's state. */
export interface SessionState {
  status: SessionStatus
  /** Recorded messages with this tab's live turn in place; message ids match the record's. */
  messages: Message[]
  openSuspensions: Suspension[]
  activeExecutionId: string | null
  /** A turn runs or is being submitted: Stop is useful. */
  isRunning: boolean
  /** The gate: nothing runs, the thread's state is known, and the draft has text. */
  canSubmit: boolean
  draft: string
  /** The last failed action (submit, Stop, an in-band turn error such as `turn_already_running`). */
  error: PreviewChatError | null
  /** The last failed read; the transcript shown is the last one known. Cleared by a good read. */
  readError: PreviewChatError | null
  /** The thread does not exist or is not this user's (a read answered 404). */
  notFound: boolean
  /** When the last fresh read succeeded (ms since the epoch). */
  lastSyncedAt: number | null
}

const noSuspensions: Suspension[] = []

function openSuspensions(state: EngineState): Suspension[] {
  const recorded = state.recorded?.openSuspensions ?? noSuspensions
  if (state.answered.length === 0) return recorded
  return recorded.filter((suspension) => !state.answered.includes(suspension.toolCallId))
}

/**
 * Derives the public view. `previous` lets it keep the identity of what did not change (the
 * message list in particular), so subscribers that compare by reference stay quiet.
 */
export function selectSessionState(
  state: EngineState,
  previous?: { engine: EngineState; view: SessionState },
): SessionState {
  const status = selectStatus(state)
  const reuseMessages =
    previous && previous.engine.recorded === state.recorded && previous.engine.live === state.live
  const messages = reuseMessages
    ? previous.view.messages
    : composeTranscript(state.recorded?.messages ?? [], state.live)
  return {
    status,
    messages,
    openSuspensions: openSuspensions(state),
    activeExecutionId: selectActiveExecutionId(state),
    isRunning:
      (status !== 'idle' && status !== 'recovering') || selectActiveExecutionId(state) !== null,
    canSubmit: status === 'idle' && state.draft.trim().length > 0,
    draft: state.draft,
    error: state.error,
    readError: state.readError,
    notFound: state.notFound,
    lastSyncedAt: state.lastSyncedAt,
  }
}
