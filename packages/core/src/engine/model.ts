/**
 * The engine's model: its state, the actions that change it and the commands it hands to the
 * effects. Only types live here; the reducer (`reduce.ts`) and its slices (`slices/`) give them
 * meaning, and the scheduler (`schedule.ts`) says when reads and deadlines fall due.
 */
import type { TurnEvent } from '../wire/contract/events'
import type { ThreadKey } from '../wire/contract/ids'
import type { ErrorRecord, PreviewChatError } from '../wire/contract/errors'
import type { PushMessage } from '../wire/contract/push'
import type { TurnRequest } from '../wire/contract/requests'
import type { HistorySnapshot, Message } from '../wire/contract/snapshot'
import type { LiveTurn } from './fold'
import type { RelayMessage } from './relay'

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
  /** The live turn is kept across reloads (`keep-live` commands): `persistTranscripts` is on. */
  keepLive?: boolean
}

/**
 * The outcome of `submit()` and `resume()`. `E`: how its error is carried (the engine's own steps
 * carry an `ErrorRecord`; the app gets the `PreviewChatError`).
 */
export type SubmitResult<E = PreviewChatError> =
  /** The server took the turn and runs it; `executionId` `null`: unannounced ([stand-in ids](../../../../docs/decisions/stand-in-ids.md)). */
  | {
      outcome: 'accepted'
      executionId: string | null
      /** Taken into the server's own queue (`message-queued`): its item there; the turn follows. */
      queueId?: string
    }
  /** A turn runs, a submission is under way, or the thread's state is not known yet: nothing was sent. */
  | { outcome: 'busy' }
  /** Not accepted (or not confirmed in time); the draft is kept. `error.code` says why. */
  | { outcome: 'failed'; error: E }
  /**
   * The thread was busy and the client has a queue (`queue()` of `@preview-chat/core/queue`): the
   * message waits in it (`state.queue`, item `id`) and is sent once the thread is free.
   */
  | { outcome: 'queued'; id: string }

/**
 * Whose turn it was, as this tab saw it: `own`, this tab posted it (a message or a resume);
 * `followed`, it started while this tab watched the thread (another tab's, another device's);
 * `recovered`, it was running already when this tab first looked (a reload mid-answer, a tab
 * opened on a running turn). Every open tab hears every ending: a side effect that must run once
 * runs for `own` (and `recovered`, if the tab that posted it may be gone).
 */
export type TurnOrigin = 'own' | 'followed' | 'recovered'

/**
 * How a turn this tab saw running ended, as the record says (spec: "Recorded state determines
 * completion"): reported once per turn to `session.onTurnEnd` listeners (the hook's `onFinish`
 * and `onError`), never for a turn that had ended before this tab looked.
 */
export interface TurnEnding<E = PreviewChatError> {
  executionId: string
  /** Whose turn it was (`TurnOrigin`). */
  origin: TurnOrigin
  /** `suspended`: it ended waiting for a person (`openSuspensions`). */
  status: 'success' | 'error' | 'cancelled' | 'interrupted' | 'suspended'
  /** The turn's recorded messages: the person's (none for a resume) and the answer. */
  messages: Message[]
  /** For `error`: the recorded failure, as `agent_error`. */
  error: E | null
}

/** The outcome of `stop()`. `cancelRequested: true` means accepted, not ended: the record says when. */
export interface StopResult<E = PreviewChatError> {
  cancelRequested: boolean
  error?: E
}

/** This tab's own turn request, from the POST until its stream ends. */
export interface OwnTurn {
  /** The request id of this POST: tells its events from a detached earlier one's. */
  token: number
  /** The message text; `null` for a resume. */
  text: string | null
  /** The suspension (tool call id) being answered, for a resume. */
  resuming: string | null
  /**
   * `posting`: not accepted yet; `queued`: accepted into the server's own queue
   * (`message-queued`), its turn not begun; `streaming`: accepted, its events arrive.
   */
  phase: 'posting' | 'queued' | 'streaming'
  /** When it was posted, and when its stream last delivered events (scheduler time). */
  since: number
  lastEventAt: number
  /** The server did not accept it within `submitTimeoutMs`: the tab recovers from the record. */
  timedOut: boolean
  /** `submit()`'s promise has its outcome (accepted, refused, timed out). */
  settled: boolean
  /** Event batches applied so far (the other tabs follow them by this number). */
  batches: number
  /** What was POSTed, kept to send it again with the same ids (a message's `messageId`). */
  request: TurnRequest
  /** POSTs of it so far: a second only where the server dedupes (`EngineState.dedupesMessages`). */
  attempts: number
  /**
   * The draft sent again under the id of an earlier POST whose fate is not known (absent: not so):
   * a refusal of this POST says nothing of that one, so the draft keeps the id.
   */
  resent?: true
}

/** History reads: at most one in flight and one wanted behind it. */
export interface ReadState {
  inFlight: boolean
  /**
   * The query-function call that carries the read in flight (the host's tag, from
   * `read-started`); `null` while a read this engine asked for has not reported its start yet.
   * A cancellation names its fetch: one of a replaced fetch ends nothing.
   */
  fetch: number | null
  /** `refresh()` and `prefetch()` calls waiting for reads to settle (their request ids). */
  waiters: readonly number[]
  /** Reads started so far (each read's ordinal). */
  count: number
  /** A read is asked for (a notification, a signal, the end of a stream). */
  wanted: boolean
  /**
   * The read wanted was asked only because the push channel (re)connected (a notification may have
   * been missed meanwhile): a read on its way that finds the thread missing makes it needless.
   * Absent: not so.
   */
  onConnect?: true
  /** The asked read skips the spacing between reads (`refresh()`). */
  urgent: boolean
  /** When the last read started (scheduler time); `null`: none yet. */
  lastStartedAt: number | null
  /** Consecutive failed reads. */
  failures: number
  /** Consecutive polls without a push channel. */
  polls: number
  /** Polls for a record that lags behind an ended turn, while nothing runs (bounded). */
  lagPolls: number
  /** When a retry or a poll is due; `null`: none. */
  followUpAt: number | null
  /** No read before this (the server's `Retry-After`); `null`: no such limit. */
  notBefore: number | null
}

/** A Stop under way, which every `stop()` joins (`waiters`) ([its target is its own](../../../../docs/decisions/stop-belongs-to-its-message.md)). */
export type StopState =
  /** Asked while this tab's message was posted and not announced: waits for its execution id. */
  | { kind: 'held'; token: number; askedAt: number; waiters: readonly number[] }
  /** `DELETE …/executions/:id` sent (or due again at `retryAt` after a `Retry-After`). */
  | {
      kind: 'execution'
      executionId: string
      /** The server accepted it (or the stream was closed): completion is what the record says. */
      accepted: boolean
      attempts: number
      retryAt: number | null
      askedAt: number
      /** Reads started when it named its execution: only a read started after may settle it. */
      afterRead: number
      waiters: readonly number[]
    }
  /** A turn that is only suspended, cancelled through its runs; held until a read after the answer. */
  | {
      kind: 'runs'
      runIds: readonly string[]
      answered: boolean
      /** The answer's outcome, for a `stop()` that joins once it came. */
      cancelled: boolean
      waiters: readonly number[]
    }

/** What the server can do as this tab learned it (`null`: not yet) ([stop by closing](../../../../docs/decisions/stop-by-closing.md)). */
export interface ServerTraits {
  keepsTurnOnDisconnect: boolean | null
  stopsByExecutionId: boolean | null
}

/** Everything the engine knows about one thread. Changed only by `reduce`. */
export interface EngineState {
  /** The thread, and this tab's id on the relay between tabs. */
  key: ThreadKey
  tab: string
  /** The session is listened to: it reads, follows push and streams. */
  active: boolean
  disposed: boolean
  /** The last recorded snapshot applied (the TanStack Query cache holds the same object). */
  recorded: HistorySnapshot | null
  /** A fresh read has succeeded, or the thread is known to be new: the gate may open. */
  synced: boolean
  /** The last read answered 404: the thread does not exist or is not this user's. */
  notFound: boolean
  /** The live view of the running (or just ended) turn: this tab's own, or another tab's. */
  live: LiveTurn | null
  /** `live` was kept across a reload (`persistTranscripts`): no stream of it here, a record covers it. */
  kept: boolean
  /** Reads started when this tab first saw the live turn: only a later read may end it ([rule](../../../../docs/rules.md#r-read-null-active)). */
  liveAfterRead: number
  /** Reads started when the live turn ended: only a later read may drop a turn the server never named. */
  liveEndedAfterRead: number
  /** Ended live turns the record has not caught up with yet: shown until a read covers them. */
  settled: readonly LiveTurn[]
  own: OwnTurn | null
  /** Tokens of this tab's turn streams still open (its own, and detached earlier ones). */
  streams: readonly number[]
  stop: StopState | null
  reads: ReadState
  server: ServerTraits
  /** The push channel is connected; `lost`: it was, and notifications may have been missed. */
  push: { connected: boolean; lost: boolean }
  /** Another tab's live turn followed: whose, its last batch, since when, a confirming read asked ([decision](../../../../docs/decisions/posting-hold.md)). */
  relay: {
    tab: string
    executionId: string
    seq: number
    since: number
    /** Reads started when its confirming read was asked for (`null`: not yet): only a later one counts. */
    checked: number | null
  } | null
  /** The execution whose whole turn this tab asked the streaming tab for (asked once). */
  syncAsked: string | null
  /** Other tabs' messages on their way, by tab, with when (scheduler time) ([the hold](../../../../docs/decisions/posting-hold.md)). */
  postingHolds: Readonly<Record<string, number>>
  /** A derived active execution (n8n) with no output yet, aged on this tab's own clock (`SILENT_TURN_MAX_AGE_MS`). */
  silent: { executionId: string; since: number; expired: boolean } | null
  /**
   * Suspensions this tab answered, hidden from `openSuspensions` (never answered twice) until a
   * read started after the answer (`afterRead`: reads started when it was sent) shows the record,
   * or the answer's turn fails before its record says the answer was taken.
   */
  answered: readonly { toolCallId: string; afterRead: number }[]
  /** Executions this tab saw running whose ending it has not reported yet (`TurnEnding`). */
  watching: readonly string[]
  /** Whose each watched execution is (`TurnOrigin`); absent: `followed`. */
  origins?: Readonly<Record<string, TurnOrigin>>
  /** Executions whose ending was reported (never reported twice). */
  reported: readonly string[]
  /** Executions ended when a stand-in turn began: it adopts none of their ids ([decision](../../../../docs/decisions/stand-in-ids.md)). */
  standInBase: readonly string[]
  /**
   * The same for each turn of `settled` that goes by a stand-in id, by that id (absent: none; one
   * that left `settled` stays until the next turn is set aside): a turn set aside is matched to
   * the record as the live one is ([rule](../../../../docs/rules.md#r-n8n-stand-in-set-aside)).
   */
  settledBase?: Readonly<Record<string, readonly string[]>>
  /** This tab lost track of its own turn (a cut stream, no answer): cleared by a fresh read. */
  cut: boolean
  draft: string
  /**
   * The `messageId` this draft, as it is, was POSTed with, whose fate is not known yet (kept with
   * the draft across a reload: a page left right after Send). A read whose record holds it clears
   * the draft (the message was taken); an edit of the draft forgets it.
   */
  draftSentAs: string | null
  error: ErrorRecord | null
  readError: ErrorRecord | null
  lastSyncedAt: number | null
  /**
   * A chat POST whose `messageId` the thread already took is answered with a bare `done` and
   * records nothing (the server's `Preview-Chat-Capabilities: message-dedupe`, learned from each
   * turn stream's answer): a message whose POST lost its answer before any event is sent again,
   * with the same ids. `false` or `null` (released n8n 2.41): never sent twice. The engine's own:
   * no app renders from it, so learning it costs no render.
   */
  dedupesMessages: boolean | null
  /**
   * When the runner was last asked to wake the engine (`set-alarm`), or `null` for no alarm: never
   * later than the next deadline or read (`nextWake`), which it may precede (a step that only
   * moves that time later arms nothing; the early alarm's `tick` arms the real time).
   */
  wakeAt: number | null
  /** The recorded snapshot shown came from this browser's storage (`persist`): no server had it. */
  recordedHere: boolean
  /**
   * The app's `isNew` hint, for a thread this browser followed before (`EngineInit.knownHere`):
   * stale (a `?new=1` left in the URL). The first render takes the hint all the same, as a server
   * render (which cannot know) does and hydration expects; the first activation reads. False or
   * absent: no hint, or a fresh one.
   */
  staleHint?: boolean
  /**
   * Reads started when the app last put a record in the cache (`setQueryData`), or `null`: a read
   * already on its way then answers with an older record, which does not replace the app's.
   */
  appRecordAfterRead: number | null
  /** The thread's message queue, with `queue()` of `@preview-chat/core/queue` (absent without). */
  queue?: QueueState
}

/** What a Stop, or a turn that failed, does to the messages still queued. */
export type WhenStopped = 'keep' | 'pause' | 'draft'

/** A queued message, as the store keeps it (shared by every tab of the scope). */
export interface StoredQueueItem {
  /** The message's client id: its `messageId` on the wire, its id in the record. */
  id: string
  text: string
  /**
   * `queued`: waiting; `sending`: a tab (`by`) posted it and its fate is not known yet;
   * `undelivered`: it could not be sent, or may have been (`error` says which); the person decides.
   */
  status: 'queued' | 'sending' | 'undelivered'
  error?: ErrorRecord
  /** The tab sending it. */
  by?: string
  /**
   * The server took it into its own queue (`message-queued`) as this item: it waits there, and
   * leaves this queue once a read of the server's queue no longer lists it, or the record holds it.
   */
  queueId?: string
  /**
   * A Stop, or a turn that failed, paused it while it waited (`whenStopped: 'pause'`): it is not
   * sent until `resumeQueue()` or "send now". A message queued after that pause is not held by it.
   */
  held?: true
}

/**
 * A thread's queue as the store keeps it. It is paused while a message of it is `held` (the
 * stored form also says `paused`, for a page of an earlier version).
 */
export interface StoredQueue {
  items: readonly StoredQueueItem[]
  /** The server dedupes by `messageId`, as a tab learnt it (`null`: not known). */
  dedupes: boolean | null
  /** The server has a queue of its own (`message-queued`), as a tab learnt it (`null`: not known). */
  serverQueue: boolean | null
  /**
   * Changes a tab made to the server's queue (edits, removals, moves, steers): one more tells the
   * other tabs to read it again, where no push says so.
   */
  serverRev: number
  /**
   * The last executions whose Stop, pressed in a tab of the scope, paused the queue (`pause`):
   * their cancelled ending pauses it no more, so a resume pressed before that ending reached the
   * sender stands. Absent: none.
   */
  stopped?: readonly string[]
}

/** The server's own queue of the thread, as this tab last read it (`GET …/chat/:threadId/queue`). */
export interface ServerQueueView {
  /** The running execution a queued message can be steered into now. */
  steerable: string | null
  /** In the server's order: accepted steers first, then what waits. */
  items: readonly { queueId: string; text: string; steering: boolean }[]
}

/** A change asked of the server's queue (its routes, `next-era.md`). */
export type ServerQueueCall =
  | { op: 'edit'; queueId: string; text: string }
  | { op: 'remove'; queueId: string }
  /** `queueId` takes `targetQueueId`'s place; `expectedQueueIds`: the pending order as shown. */
  | { op: 'reorder'; queueId: string; targetQueueId: string; expectedQueueIds: string[] }
  /** Into the running turn `executionId`. */
  | { op: 'steer'; queueId: string; executionId: string }

/**
 * What the host heard of a message handed to the server's queue (`queue-post`), raw: the stream's
 * first event, the stream cut before any, or the POST failed. The reducer reads it
 * (`engine/queue/handOver.ts`).
 */
export type QueuePostHeard = { event: TurnEvent } | { cut: ErrorRecord } | { failed: ErrorRecord }

/**
 * How the reducer reads a hand-over's answer: taken into the queue; a bare `done` (a retry of one
 * taken already); taken up at once; refused; or no answer at all.
 */
export type QueuePostAnswer =
  | { kind: 'queued'; queueId: string }
  | { kind: 'duplicate' }
  | { kind: 'started' }
  | { kind: 'refused'; error: ErrorRecord }
  | { kind: 'lost'; error: ErrorRecord }

/** One change to a queue: what a tab asks, applied to what the store holds when it writes. */
export type QueueChange =
  | { op: 'add'; item: StoredQueueItem }
  | { op: 'edit'; id: string; text: string }
  /** The person removed it (not while it is `sending`). */
  | { op: 'remove'; id: string }
  /** Its fate is known (its turn began, or the record holds it): it leaves the queue. */
  | { op: 'done'; id: string }
  /** Move `id` before `before` (`null`: to the end). */
  | { op: 'move'; id: string; before: string | null }
  /**
   * To the front, to be sent next (`sendQueuedNow`). `retry`: the person chose to send again one
   * they saw `undelivered`; without it, an item found `undelivered` by then stays so (a change made
   * on a stale view never sends twice what may have been sent).
   */
  | { op: 'front'; id: string; retry?: true }
  | { op: 'mark'; id: string; status: StoredQueueItem['status']; error?: ErrorRecord; by?: string }
  /** A Stop or a failed turn paused these (`held`): each that still waits when it is written. */
  | { op: 'hold'; ids: readonly string[] }
  /** `resumeQueue()`: nothing is held any more. */
  | { op: 'resume' }
  | { op: 'dedupes'; dedupes: boolean }
  | { op: 'server-queue'; serverQueue: boolean }
  /** A Stop of this execution paused the queue (`StoredQueue.stopped`). */
  | { op: 'stopped'; executionId: string }
  /** This tab changed the server's queue: `serverRev` goes up. */
  | { op: 'server-changed' }
  /** It is in the server's own queue as `queueId` (`message-queued`). */
  | { op: 'handed'; id: string; queueId: string }

/** The queue's part of the engine state (`withQueue`, `engine/queue/`). */
export interface QueueState {
  /** What the store held when this tab last read or wrote it. */
  stored: StoredQueue
  /** This tab's changes not written yet (they wait for the store's next transaction). */
  pending: readonly QueueChange[]
  /** `stored` with `pending` applied: what the UI shows. */
  view: StoredQueue
  /**
   * The changes the transaction in progress writes, and what the store held before them: given
   * back to `pending` if it fails (`queue-store-failed`), so that nothing of them is lost.
   */
  writing: { changes: readonly QueueChange[]; before: StoredQueue } | null
  /** A transaction of the store is asked for (`queue-lock`) and has not run yet. */
  locking: boolean
  /**
   * The store refused this tab's last write (a full quota: `QuotaExceededError`): its changes wait
   * in `pending`, the queue works on from this tab's memory (a message it marked `sending` is sent
   * all the same), and the write is tried again at `retryAt` (scheduler time; `attempts` so far),
   * not only at a next step an idle thread may never take. `null`: written as it should be.
   */
  unwritten: { attempts: number; retryAt: number } | null
  /** This tab holds the thread's sender lock: it alone sends queued messages. */
  sender: boolean
  whenStopped: WhenStopped
  /**
   * The queued message this tab sends: its POST's token, whether it went out, and how: through
   * the engine (a turn of this tab), or handed to the server's own queue (`queue-post`), and how
   * many times (a second only where the server dedupes).
   */
  sending: {
    id: string
    token: number
    posted: boolean
    via?: 'server-queue'
    attempts?: number
  } | null
  /** The store was opened and read (`queue-attached`): until then, changes only wait. */
  attached: boolean
  /** The store keeps the queue across reloads (IndexedDB); `false`: this document's memory only. */
  kept: boolean
  /**
   * A read of the record answered in this session (or it said the thread does not exist): until
   * then the queue sends nothing, since it cannot know the thread is free (a reload mid-turn).
   */
  recordRead: boolean
  /** Queued messages this tab posted so far (their tokens are `-1`, `-2`, …). */
  sends: number
  /**
   * Reads started when this sender found messages another tab was sending (closed since, or
   * reloaded), or when a queued message was refused as busy: nothing is sent until a read started
   * after it answers (it says which messages the server took, and what runs); `null`: no wait.
   */
  judgeAfterRead: number | null
  /** The scheduler time of the last action that had one: when a queued message is posted. */
  clock: number
  /** The server's own queue as last read (`null`: not read, or the server has none). */
  server: ServerQueueView | null
  /** Reads of the server's queue: asked so far, the last one applied, one in flight, one wanted. */
  serverReads: { asked: number; applied: number; inFlight: boolean; wanted: boolean }
  /**
   * Per item in the server's queue that this queue holds (`queueId`): how many reads of the
   * server's queue were asked when this tab learnt of it. A read asked after that which does not
   * list it shows it was taken up (or removed): it leaves this queue.
   */
  handedAt: Readonly<Record<string, number>>
  /**
   * Queued messages this tab posted as its own turn that the server took into its queue: by POST
   * token. The turn begins on that POST (`execution-started`), and the message leaves the queue then.
   */
  handedPosts: Readonly<Record<number, string>>
}

/** `at` is the scheduler's clock (`timers.now()`); `stampedAt` the wall clock (`now()`). */
export type EngineAction =
  /**
   * The session was made: what the query cache held for the thread, checked (`none`, junk with why,
   * or a snapshot; `keptHere`: one that `persist` restored in this browser).
   */
  | {
      type: 'mounted'
      cached:
        | { kind: 'none' }
        | { kind: 'invalid'; message: string }
        | { kind: 'snapshot'; snapshot: HistorySnapshot; keptHere: boolean }
      at: number
      stampedAt: number
      random: number
    }
  | { type: 'activated'; at: number; pushConnected: boolean }
  /** The session stopped listening (no subscriber): what happens next is only in the record. */
  | { type: 'deactivated' }
  /** `dispose()`: every pending request ends, every open request is aborted. */
  | { type: 'disposed' }
  /** Time passed: deadlines due at `at` fire. */
  | { type: 'tick'; at: number }
  | { type: 'draft-changed'; draft: string }
  /** `submit(text?)`: `text` or, without it, the draft. `request` names the call's outcome. */
  | {
      type: 'submit-requested'
      request: number
      text: string | undefined
      /** The message's client id (a UUID the session minted), sent as `messageId`. */
      messageId: string
      at: number
    }
  | {
      type: 'resume-requested'
      request: number
      runId: string
      toolCallId: string
      resumeData: unknown
      at: number
    }
  /**
   * The POST was answered with a turn stream; `capabilities`: the tokens of its capabilities header
   * (`capabilityTokens`, none without one), as data: the engine reads `message-dedupe`, an opt-in
   * part its own (the queue of `@preview-chat/core/queue`: `message-queue`).
   */
  | { type: 'turn-opened'; token: number; capabilities: readonly string[] }
  /** The POST got no turn stream: refused, failed, or a page instead of the API. */
  | { type: 'post-failed'; token: number; error: ErrorRecord }
  /** Events of one of this tab's turn streams, in order (one network chunk's worth). */
  | { type: 'turn-events'; token: number; events: TurnEvent[]; at: number; stampedAt: number }
  /** A turn stream ended: after its terminal event, cut before one, or aborted by this tab. */
  | {
      type: 'stream-ended'
      token: number
      end: { kind: 'terminal' } | { kind: 'cut'; error: ErrorRecord } | { kind: 'aborted' }
    }
  /** Anything that arrived on the relay channel: parsed by the reducer, never trusted. */
  | { type: 'relay-received'; data: unknown; at: number; stampedAt: number }
  /** A read is asked for: `refresh()` (urgent, with the call's `request`), the page coming back. */
  | { type: 'read-wanted'; urgent: boolean; request?: number }
  /**
   * `prefetch()`: the app wants the first read started before anything subscribes; `request`: the
   * call waits for the read on its way, as `refresh()` does (`ReadState.waiters`).
   */
  | { type: 'prefetch-requested'; at: number; request?: number }
  /** A listener of the app's (state, turn endings) threw: reported, never in the engine's way. */
  | { type: 'listener-threw'; listener: 'state' | 'turn-end'; message: string }
  /** A push notification of this user (about any thread). */
  | { type: 'push-message'; message: PushMessage }
  /** A history read began: the query's function ran (for a `read` command, or the app's own refetch). */
  | { type: 'read-started'; at: number; fetch: number }
  /** A snapshot reached the cache: a read's answer (`fromRead`) or the app's `setQueryData`. */
  | {
      type: 'snapshot'
      snapshot: HistorySnapshot
      fresh: boolean
      fromRead: boolean
      /**
       * The read answered with the very record the cache held (a 304, or a body equal to it): a
       * fact of the host, carried as data, so that a replay from JSON decides alike.
       */
      unchanged?: boolean
      at: number
      stampedAt: number
      random: number
    }
  | { type: 'read-failed'; error: ErrorRecord; at: number; random: number }
  /**
   * A read ended without an answer: its fetch was aborted (`fetch`), or the query that carried it
   * was removed or reset (`fetch: null`: whatever read was in flight).
   */
  | { type: 'read-cancelled'; fetch: number | null }
  | { type: 'push-changed'; connected: boolean; at: number; random: number }
  | { type: 'stop-requested'; request: number; at: number }
  | { type: 'stop-answered'; executionId: string; cancelRequested: boolean }
  | { type: 'stop-failed'; executionId: string; error: ErrorRecord; at: number }
  | { type: 'runs-answered'; cancelled: boolean }
  | { type: 'runs-failed'; error: ErrorRecord }
  | { type: 'error-cleared' }
  /**
   * An answer of the server carried its capabilities header (`Preview-Chat-Capabilities`): what
   * it offers, from the server itself (a read's answer as much as a POST's).
   */
  | { type: 'capabilities-heard'; capabilities: readonly string[] }
  | QueueAction

/** The queue's actions (`@preview-chat/core/queue`): the engine without it takes none of them. */
export type QueueAction =
  /**
   * The queue's store was opened (`queue-open`): what it held (`stored`: the raw string, or
   * `null`), whether it is kept across reloads (`kept`: IndexedDB; `false`: this document's
   * memory), and the settings.
   */
  | { type: 'queue-attached'; stored: unknown; kept: boolean; whenStopped: WhenStopped; at: number }
  /** The queue's store could not be opened or read (`queue-open`): IndexedDB refused, say. */
  | { type: 'queue-store-refused'; error: ErrorRecord }
  /** A tab (another, or this one's other client) wrote the queue (`stored`: what it holds now, raw). */
  | { type: 'queue-stored'; stored: unknown }
  /** This tab holds the store's transaction (`queue-lock`); `stored`: what it holds now (raw). */
  | { type: 'queue-locked'; stored: unknown }
  /** That transaction's write (`queue-store`) is committed: a message marked `sending` may go. */
  | { type: 'queue-written' }
  /**
   * That transaction failed (a full disk, a refused IndexedDB), before or after the reducer's
   * `queue-locked`: nothing of it was written.
   */
  | { type: 'queue-store-failed'; error: ErrorRecord }
  /**
   * This tab got (`stored`: what the store holds then, raw) or gave up the thread's sender lock.
   * The new sender starts from the store as it is, not from change notices still on their way.
   */
  | { type: 'queue-sender'; held: true; stored: unknown }
  | { type: 'queue-sender'; held: false }
  | { type: 'queue-edit'; id: string; text: string }
  | { type: 'queue-remove'; id: string }
  /** Move `id` to position `to` of the queue as shown. */
  | { type: 'queue-reorder'; id: string; to: number }
  | { type: 'queue-send-now'; id: string }
  | { type: 'queue-resume' }
  /**
   * A push `agentMessageQueueUpdated` arrived, checked: the thread it names (push goes to every
   * member of a project; the reducer keeps this thread's).
   */
  | { type: 'queue-server-changed'; thread: ThreadKey }
  /** A read of the server's queue (`queue-read-server` number `seq`) answered, checked. */
  | { type: 'queue-server-read'; seq: number; server: ServerQueueView }
  | { type: 'queue-server-read'; seq: number; error: ErrorRecord }
  /** A message handed to the server's queue (`queue-post`) was answered. */
  | { type: 'queue-posted'; token: number; heard: QueuePostHeard }
  /** A change of the server's queue (`queue-call`) was answered; `conflict`: its 409's reason. */
  | {
      type: 'queue-called'
      call: ServerQueueCall
      error: ErrorRecord | null
      conflict: string | null
    }
  /** The page is being left (`pagehide`): what is not written yet is written now (`queue-flush`). */
  | { type: 'queue-leaving' }

/**
 * What the reducer asks the effects to do. The effects perform a command and dispatch what came
 * of it; they decide nothing.
 */
export type Command =
  /** POST the message (or resume) and read its turn stream, tagged with `token`. */
  | { type: 'post'; token: number; request: TurnRequest }
  /** Close (abort the reading of) the turn stream of `token`. */
  | { type: 'close-stream'; token: number }
  | { type: 'stop-execution'; executionId: string }
  /** Abort the Stop request in flight. */
  | { type: 'abort-stop' }
  | { type: 'cancel-runs'; runIds: readonly string[] }
  /** Cancel the history read in flight (its request is aborted). */
  | { type: 'cancel-read' }
  /** Start a history read now (through the query; before the session is observed: a prefetch). */
  | { type: 'read' }
  /** Wake the engine with a `tick` at `at` (scheduler time; at once if past), `null`: never. */
  | { type: 'set-alarm'; at: number | null }
  /** Resolve these `refresh()` and `prefetch()` calls: their reads settled (`postStep`). */
  | { type: 'settle-refresh'; requests: readonly number[] }
  /** A read said the thread is not this user's (404, 403): `persist` forgets what it kept of it. */
  | { type: 'forget-kept' }
  | { type: 'relay'; message: RelayMessage }
  /** Keep the live turn for a reload (`null`: forget it); only with `config.keepLive`. */
  | { type: 'keep-live'; turn: LiveTurn | null }
  /**
   * Keep the draft for a reload (`''`: remove it), and beside it the `messageId` it was sent with
   * (`sentAs`; `null`: remove it).
   */
  | { type: 'store-draft'; draft: string; sentAs: string | null }
  | { type: 'settle-submit'; request: number; result: SubmitResult<ErrorRecord> }
  | { type: 'settle-stop'; requests: readonly number[]; result: StopResult<ErrorRecord> }
  /** A turn this tab saw running ended (the record says how). */
  | { type: 'turn-ended'; ending: TurnEnding<ErrorRecord> }
  /** Report a protocol oddity (once per message, by the client). */
  | { type: 'warn'; message: string }
  /**
   * Open a read-modify-write transaction of the thread's queue: dispatch `queue-locked` with what
   * the store holds, write the `queue-store` that step returns, then dispatch `queue-written`.
   */
  | { type: 'queue-lock' }
  /** Write the queue (inside that transaction, so no other tab's write is lost between). */
  | { type: 'queue-store'; stored: StoredQueue }
  /**
   * The page goes (disposed, or `pagehide`) with changes not written yet: apply them to what the
   * store holds and write it, in a transaction started at once (a page that is gone runs no later
   * step), so that a message written just before is not lost.
   */
  | { type: 'queue-flush'; changes: readonly QueueChange[] }
  /** Read the server's own queue of the thread; answer with `queue-server-read` of this `seq`. */
  | { type: 'queue-read-server'; seq: number }
  /**
   * Hand a queued message to the server's own queue: POST it (same `messageId`), read its stream
   * only until the server's first word (`message-queued`, a bare `done`, `execution-started` or an
   * error), then close it and answer with `queue-posted`. The turn, once taken up, is followed as
   * any other.
   */
  | { type: 'queue-post'; token: number; id: string; text: string }
  /** Ask a change of the server's queue; answer with `queue-called`. */
  | { type: 'queue-call'; call: ServerQueueCall }
  /**
   * Open the thread's queue store and read it: answer `queue-attached`, or `queue-store-refused`;
   * from then on, tell of other tabs' writes (`queue-stored`) and of the page being left
   * (`queue-leaving`).
   */
  | { type: 'queue-open' }
  /** Use this document's memory store instead (IndexedDB refused), then open it as `queue-open`. */
  | { type: 'queue-fallback' }
  /**
   * Follow the thread's queue: hear the server's queue pushes (`queue-server-changed`) and ask
   * for the sender lock (`queue-sender`).
   */
  | { type: 'queue-follow' }
  /** Stop following: the lock given up (or no longer asked), the pushes no longer heard. */
  | { type: 'queue-unfollow' }
  /** The session is gone: close the store's watch and abort the queue's requests. */
  | { type: 'queue-close' }
  /**
   * Dispatch `action` next, as its own step (the runner's): how an extension asks the engine for
   * something (the queued message's send, a read), seen as a real action by traces and inspectors.
   */
  | { type: 'act'; action: EngineAction }

/**
 * What happened in a step, as data beside its state and commands: what a part and the post-step
 * read, instead of searching commands or comparing states.
 */
export type StepEvent =
  /**
   * A message of this tab (`token`: its `submit()`; negative, the queue's send) met its fate so
   * far: `posted` (its POST went out), `taken` (the server accepted it, or the queue holds it),
   * `refused` (not taken, for sure: `resent`, the same message sent again while an earlier POST of
   * it may have been taken, says nothing of that one). What the draft becomes is decided from these
   * in one place (`draftFate`, `engine/draft.ts`).
   */
  | {
      type: 'message'
      fate: 'posted' | 'taken' | 'refused'
      token: number
      text: string | null
      messageId: string | null
      resent?: boolean
    }
  /** A `submit()` (or the queue's send, a negative `request`) has its outcome. */
  | { type: 'submit-settled'; request: number; result: SubmitResult<ErrorRecord> }
  /** A turn this tab saw running ended, as the record says (`ending.status`: how). */
  | { type: 'turn-ended'; ending: TurnEnding<ErrorRecord> }
  /** Stop was pressed in this tab, and a Stop begins (not one joined under way). */
  | { type: 'stop-pressed' }
  /** A read of the record answered: a snapshot of a read, or the thread is not found. */
  | { type: 'read-answered' }

/** What one action did: the next state, the commands to perform in order, and what happened. */
export interface Step {
  state: EngineState
  commands: Command[]
  /** What happened, in order (absent: nothing to report). */
  events?: StepEvent[]
}

/**
 * A reducer: the engine's `reduce`, or its decisions (`decide`) with an extension wrapped around
 * them (`withQueue`), which `reducerWith` ends with the one post-step.
 */
export type Reducer = (state: EngineState, action: EngineAction, config: EngineConfig) => Step

/**
 * An extension's part of the reducer (`withQueue`): it wraps the engine's decisions (`decide`,
 * which has no post-step) and returns its own. It never ends a step itself: `reducerWith` (what
 * the runner and a trace's replay use) ends every step with `postStep`, so no change an extension
 * makes (the draft, a read it asks for) can miss storage, the refresh waiters or the alarm.
 */
export type Extend = (decide: Reducer) => Reducer

/** A handler of one action type: the state it meets, the action, the settings → the step. */
export type Handler<T extends EngineAction['type']> = (
  state: EngineState,
  action: Extract<EngineAction, { type: T }>,
  config: EngineConfig,
) => Step

/**
 * A part of the engine that only some clients use (the tab relay: `relayPart`), assembled into the
 * reducer by `reducerWith` so that a client without it carries none of its code. A part takes
 * actions of its own (`handlers`; an action no part takes changes nothing) and may keep deadlines:
 * `dueAt` is what the scheduler takes the minimum of, and `deadlines`, what `tick` runs when the
 * alarm rings (after the turn's and the Stop's, before a silent turn's and the read's), so that a
 * part's deadline is decided by the same function that set the alarm.
 */
export interface EnginePart {
  readonly handlers: { readonly [T in EngineAction['type']]?: Handler<T> }
  readonly dueAt?: (state: EngineState, config: EngineConfig) => number | null
  readonly deadlines?: (state: EngineState, at: number, config: EngineConfig) => Step
}
