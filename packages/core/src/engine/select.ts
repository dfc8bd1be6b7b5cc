import type { Message, Suspension } from '../wire/contract/snapshot'
import type { PreviewChatError } from '../wire/contract/errors'
import type { EngineState, ServerTraits } from './state'
import { composeTranscript } from './transcript'

/**
 * Exactly one at a time:
 * - `idle`: nothing runs; a message may be sent.
 * - `submitting`: the message is posted; the server has not accepted it yet.
 * - `streaming`: this tab reads the turn's live stream.
 * - `recovering`: this tab does not know the thread's state (first read pending, its live stream
 *   was cut, or the server never confirmed the message) and reads the recorded transcript.
 * - `following`: a turn runs that this tab has no live stream of (another tab's, or one recovered
 *   after a reload), or another tab has posted a message whose turn has not begun yet; push
 *   notifications, reads and the tab relay keep the transcript current.
 * - `stopping`: Stop was asked; the turn runs until the record shows it ended.
 */
export type SessionStatus =
  'idle' | 'submitting' | 'streaming' | 'recovering' | 'following' | 'stopping'

/**
 * How long a derived active execution (released n8n: a person's message with no answer yet) counts
 * as running without any output. A turn cancelled before its first output leaves no assistant
 * message at all; past this age, such a message no longer blocks the gate.
 */
export const SILENT_TURN_MAX_AGE_MS = 120_000

/** The execution that runs now, as far as this tab knows. */
export function selectActiveExecutionId(state: EngineState): string | null {
  const { live, recorded } = state
  if (live && !live.ended) return live.executionId
  const recordedId = recorded?.activeExecutionId ?? null
  // This tab saw the turn end live; a record that still calls it active predates that end.
  if (live && recordedId === live.executionId) return null
  if (recordedId && recorded?.derived && isSilentAndOld(state, recordedId)) return null
  return recordedId
}

function isSilentAndOld(state: EngineState, executionId: string): boolean {
  const messages = state.recorded?.messages ?? []
  if (messages.some((message) => message.id === `${executionId}:assistant`)) return false
  const user = messages.find((message) => message.id === `${executionId}:user`)
  const sentAt = user ? Date.parse(user.createdAt) : Number.NaN
  return state.lastSyncedAt !== null && state.lastSyncedAt - sentAt > SILENT_TURN_MAX_AGE_MS
}

export function selectStatus(state: EngineState): SessionStatus {
  if (state.stop) return 'stopping'
  if (state.own && !state.own.timedOut)
    return state.own.phase === 'posting' ? 'submitting' : 'streaming'
  if (state.cut || !state.synced) return 'recovering'
  // Another tab's message, sent and not begun yet, holds the gate as its turn will.
  return selectActiveExecutionId(state) || state.relayPosting !== null ? 'following' : 'idle'
}

/** The public view of a session's state. */
export interface SessionState {
  status: SessionStatus
  /** Recorded messages with the live turns in place; message ids match the record's. */
  messages: Message[]
  openSuspensions: Suspension[]
  activeExecutionId: string | null
  /**
   * A turn runs or is being submitted (here or, not begun yet, in another tab). Whether Stop can
   * act on it is `canStop`.
   */
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
  /**
   * What the server can do, as learned from its first turn or snapshot (`null`: not known yet).
   * `keepsTurnOnDisconnect: false` (released n8n 2.41): a reload, `dispose()` or closing the tab
   * cancels a turn this tab streams — say so rather than promise recovery.
   */
  server: ServerTraits
  /**
   * Stop can be pressed here: a turn runs and either the server stops by execution id, or this
   * tab holds the turn's stream (a server without Stop by id stops a turn when its POST closes).
   */
  canStop: boolean
}

const noSuspensions: Suspension[] = []

/** The open suspensions, less those this tab answered already. */
export function selectOpenSuspensions(state: EngineState): Suspension[] {
  const recorded = state.recorded?.openSuspensions ?? noSuspensions
  if (state.answered.length === 0) return recorded
  return recorded.filter((suspension) => !state.answered.includes(suspension.toolCallId))
}

/**
 * Derives the public view. `previous` lets it keep the identity of what did not change: the
 * message list, and the whole view when nothing visible changed (the read bookkeeping, say), so
 * that subscribers comparing by reference stay quiet.
 */
export function selectSessionState(
  state: EngineState,
  previous?: { engine: EngineState; view: SessionState },
): SessionState {
  const status = selectStatus(state)
  const reuseMessages =
    previous &&
    previous.engine.recorded === state.recorded &&
    previous.engine.live === state.live &&
    previous.engine.settled === state.settled
  const live = state.settled.length === 0 ? state.live : [...state.settled, state.live]
  const messages = reuseMessages
    ? previous.view.messages
    : composeTranscript(state.recorded?.messages ?? [], live)
  const activeExecutionId = selectActiveExecutionId(state)
  const view: SessionState = {
    status,
    messages,
    openSuspensions: selectOpenSuspensions(state),
    activeExecutionId,
    isRunning: (status !== 'idle' && status !== 'recovering') || activeExecutionId !== null,
    canSubmit: status === 'idle' && state.draft.trim().length > 0,
    draft: state.draft,
    error: state.error,
    readError: state.readError,
    notFound: state.notFound,
    lastSyncedAt: state.lastSyncedAt,
    server: state.server,
    canStop:
      status !== 'stopping' &&
      (activeExecutionId !== null || state.own !== null) &&
      (state.server.stopsByExecutionId !== false || (state.own !== null && !state.own.timedOut)),
  }
  if (!previous) return view
  const before = previous.view
  for (const key of Object.keys(view) as (keyof SessionState)[]) {
    if (view[key] !== before[key]) return view
  }
  return before
}
