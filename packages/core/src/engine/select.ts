import { fromErrorRecord, type ErrorRecord, type PreviewChatError } from '../wire/contract/errors'
import type { Message, Suspension } from '../wire/contract/snapshot'
import { activeExecutionId, openSuspensions, sessionStatus, type SessionStatus } from './derive'
import type { LiveTurn } from './fold'
import type { EngineState, ServerTraits } from './model'
import { composeTranscript, recordSupersedes } from './transcript'

export type { SessionStatus } from './derive'
export {
  activeExecutionId as selectActiveExecutionId,
  openSuspensions as selectOpenSuspensions,
  sessionStatus as selectStatus,
}

/** The public view of a session's state. */
export interface SessionState {
  status: SessionStatus
  /** Recorded messages with the live turns in place; message ids match the record's. */
  messages: Message[]
  /**
   * The thread's record is known: a read answered (or found no thread), or a recorded transcript
   * is shown (the cache's, a thread known to be new). `false`: nothing is known yet, so an empty
   * `messages` means "loading", not "empty".
   */
  loaded: boolean
  openSuspensions: Suspension[]
  activeExecutionId: string | null
  /**
   * A turn runs or is being submitted (here or, not begun yet, in another tab). Whether Stop can
   * act on it is `canStop`.
   */
  isRunning: boolean
  /**
   * The thread may take a message now: nothing runs or is on its way (here or in another tab),
   * and its state is known. What a UI kit's send button needs when its composer owns the text.
   */
  canSend: boolean
  /** `canSend`, and the draft has text: `submit()` without an argument would send. */
  canSubmit: boolean
  draft: string
  /** The last failed action (submit, Stop, an in-band turn error such as `turn_already_running`). */
  error: PreviewChatError | null
  /** The last failed read; the transcript shown is the last one known. Cleared by a good read. */
  readError: PreviewChatError | null
  /** The thread does not exist or is not this user's (a read answered 404). */
  notFound: boolean
  /**
   * When a fresh read last brought a record that differed from the one shown, or first confirmed
   * one (ms since the epoch, this machine's clock). A read that finds the record unchanged (a 304)
   * leaves it, so that it costs no render.
   */
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
  /**
   * With `queue()` (`@preview-chat/core/queue`): the messages waiting for the thread, in the order
   * they will be sent, shared by this scope's tabs and kept across reloads. Never in `messages`
   * until their turn begins. Absent without a queue.
   */
  queue?: readonly QueuedMessage[]
  /**
   * With a queue: a Stop or a failed turn paused what was queued then, and some of it waits
   * (`held`) for `resumeQueue()`; `false` with nothing to resume. A message queued after the
   * pause is not held by it.
   */
  queuePaused?: boolean
  /**
   * With a queue: `false` while what it holds is in this page's memory only, lost on a reload:
   * the browser refused IndexedDB (a locked-down or private profile), or refuses its writes (a
   * full quota) until a write, tried again on a schedule, is taken. Said once through `onWarning`
   * too.
   */
  queueKept?: boolean
  /** With a queue: changes a queued message's text (not while it is `sending`). */
  editQueued?(id: string, text: string): void
  /** With a queue: removes a queued message (not while it is `sending`). */
  removeQueued?(id: string): void
  /** With a queue: moves a queued message to position `toIndex` of `queue`. */
  reorderQueued?(id: string, toIndex: number): void
  /**
   * With a queue: moves a message to the front, to be sent as soon as the thread is free, and
   * resumes a paused queue; an `undelivered` one is sent again (with the same id: a server that
   * dedupes records it once).
   */
  sendQueuedNow?(id: string): void
  /** With a queue: sends the messages a pause holds ("Send queued (N)"). */
  resumeQueue?(): void
}

/** A message in the queue (`SessionState.queue`). */
export interface QueuedMessage {
  /**
   * Its client id: the `messageId` it is sent with, and its id in the record once sent. An item
   * of the server's queue that no tab of this scope sent (another device's) is `queue:<queueId>`.
   */
  id: string
  text: string
  /**
   * `queued`: waiting for the thread; `sending`: posted, its fate not known yet; `undelivered`:
   * it could not be sent, or may have been (`error` says which): edit, send now or remove it;
   * `steering`: the server adds it to the running turn (a server with a queue of its own).
   */
  status: 'queued' | 'sending' | 'undelivered' | 'steering'
  error?: PreviewChatError
  /**
   * It waits in the server's own queue (a server that queues messages, `next-era.md`) as this
   * item: edits, removal, moves and "send now" go to the server, which may refuse one (409:
   * it started meanwhile) with `state.error` saying why.
   */
  queueId?: string
  /**
   * A Stop, or a turn that failed, paused it while it waited (`whenStopped: 'pause'`): it is
   * sent after `resumeQueue()` ("Send queued (N)", N the held ones) or "send now". A message
   * queued after the pause is not held: it goes when the thread is free.
   */
  held?: true
}

const publicError = (record: ErrorRecord | null): PreviewChatError | null =>
  record && fromErrorRecord(record)

/**
 * The live turns to show: a running one the record has overtaken (this tab's stream stalled
 * behind a buffering proxy, say) gives way to the record, so the live view never hides newer
 * recorded progress; it shows again once it is ahead.
 */
function shownLive(state: EngineState): (LiveTurn | null)[] | LiveTurn | null {
  const { live, recorded } = state
  const current = live && recorded && !live.ended && recordSupersedes(recorded, live) ? null : live
  return state.settled.length === 0 ? current : [...state.settled, current]
}

const sameSuspensions = (a: readonly Suspension[], b: readonly Suspension[]) =>
  a.length === b.length &&
  a.every((item, i) => {
    const other = b[i]
    return (
      item === other ||
      (item.toolCallId === other?.toolCallId &&
        item.runId === other.runId &&
        item.suspendPayload === other.suspendPayload)
    )
  })

/**
 * Derives the public view. `previous` lets it keep the identity of what did not change: the
 * message list, and the whole view when nothing visible changed (the read bookkeeping, say), so
 * that subscribers comparing by reference stay quiet.
 */
export function selectSessionState(
  state: EngineState,
  previous?: { engine: EngineState; view: SessionState },
): SessionState {
  const status = sessionStatus(state)
  const reuseMessages =
    previous &&
    previous.engine.recorded === state.recorded &&
    previous.engine.live === state.live &&
    previous.engine.settled === state.settled
  const messages = reuseMessages
    ? previous.view.messages
    : composeTranscript(state.recorded?.messages ?? [], shownLive(state))
  const active = activeExecutionId(state)
  const suspensions = openSuspensions(state)
  const view: SessionState = {
    status,
    messages,
    loaded: state.recorded !== null || state.notFound || state.synced,
    openSuspensions:
      previous && sameSuspensions(previous.view.openSuspensions, suspensions)
        ? previous.view.openSuspensions
        : suspensions,
    activeExecutionId: active,
    isRunning: (status !== 'idle' && status !== 'recovering') || active !== null,
    canSend: status === 'idle',
    canSubmit: status === 'idle' && state.draft.trim().length > 0,
    draft: state.draft,
    error: publicError(state.error),
    readError: publicError(state.readError),
    notFound: state.notFound,
    lastSyncedAt: state.lastSyncedAt,
    server: state.server,
    canStop:
      status !== 'stopping' &&
      (active !== null || state.own !== null) &&
      (state.server.stopsByExecutionId !== false || (state.own !== null && !state.own.timedOut)),
  }
  if (!previous) return view
  const before = previous.view
  for (const key of Object.keys(view) as (keyof SessionState)[]) {
    if (view[key] !== before[key]) return view
  }
  return before
}
