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
import type { QueueAction, QueueCommand } from './queue/model'
import type { RelayAction, RelayCommand } from './relay'

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
  /**
   * Another tab said it posted a message whose turn has not begun: the gate holds as that turn
   * will. Told by the relay's part, which keeps whose and since when; `false` without a relay
   * ([the hold](../../../../docs/decisions/posting-hold.md)).
   */
  othersPosting: boolean
  /**
   * An execution the record still calls active that this tab counts as ended (`null`: none): the
   * released platform's part says so of a derived turn that stayed silent too long
   * (`SILENT_TURN_MAX_AGE_MS`, on this tab's own clock).
   */
  presumedEnded: string | null
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
}

/** `at` is the scheduler's clock (`timers.now()`); `stampedAt` the wall clock (`now()`). */
export type BaseAction =
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

/** The parts' actions: each part's own module declares them, and the engine takes none. */
export type PartAction = RelayAction | QueueAction

/** Every action a session's reducer takes: the engine's own, and its parts'. */
export type EngineAction = BaseAction | PartAction

/**
 * What the reducer asks the effects to do. The effects perform a command and dispatch what came
 * of it; they decide nothing.
 */
export type BaseCommand =
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
   * Dispatch `action` next, as its own step (the runner's): how a part asks the engine for
   * something (the queued message's send, a read), seen as a real action by traces and inspectors.
   */
  | { type: 'act'; action: EngineAction }

/** The parts' commands: each part's own module declares them, and its host performs them. */
export type PartCommand = RelayCommand | QueueCommand

/** Every command a step may ask for: the engine's own, and its parts'. */
export type Command = BaseCommand | PartCommand

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
  /** Nobody listens to the session any more (or it was disposed): what followed other tabs ends. */
  | { type: 'went-quiet' }
  /**
   * This tab's message (or resume) went out and its turn has not begun (`active: true`), or it is
   * no longer on its way (`false`: its turn began elsewhere, it was not taken up, or it is left to
   * a read). What the other tabs hold their gate by, where a relay tells them (`relayPart`).
   */
  | { type: 'posting'; active: boolean }
  /**
   * This tab's own turn began, shown as `turn` (`seq`: no batch of its events yet); `after`: for a
   * turn under a stand-in id, the executions that had ended when it began (what a later record
   * names it by).
   */
  | { type: 'own-turn-began'; turn: LiveTurn; seq: 0; after: readonly string[] }
  /** The `seq`-th batch of this tab's own turn's events was applied (`executionId`: as it went by). */
  | { type: 'own-turn-streamed'; executionId: string; seq: number; events: readonly TurnEvent[] }

/** What one action did: the next state, the commands to perform in order, and what happened. */
export interface Step {
  state: EngineState
  commands: Command[]
  /** What happened, in order (absent: nothing to report). */
  events?: StepEvent[]
}

/**
 * A reducer: the engine's `reduce`, or its decisions (`decide`) with the client's parts wrapped
 * around them (`decideWith`), which `reducerWith` ends with the one post-step.
 */
export type Reducer = (state: EngineState, action: EngineAction, config: EngineConfig) => Step

/** A handler of one action type: the state it meets, the action, the settings → the step. */
export type Handler<T extends EngineAction['type']> = (
  state: EngineState,
  action: Extract<EngineAction, { type: T }>,
  config: EngineConfig,
) => Step

/**
 * A part of the engine that only some clients use (the released platform's `releasedPart`, the
 * tab relay's `relayPart`, the queue's `queuePart`), so that a client without it carries none of
 * its code: the one shape every extension of the engine has, like `store.with()`.
 *
 * - `wrap` takes the reducer made so far (the engine's decisions, wrapped by the parts listed
 *   before this one) and returns its own: it may take an action of its own, or hand every action
 *   on to the inner reducer and add to what comes back. Parts compose by wrapping, in the order the
 *   client lists them (`decideWith`), so two parts that take one action both see it: the later
 *   one first on the way in, the earlier one's step first on the way out. A part reads what
 *   happened from the step's `events`, never from its commands nor by comparing states; it keeps
 *   its state under its own key of the engine state (the queue: `queue`), which the engine's
 *   steps carry through. It never ends a step itself: `reducerWith` ends every step with
 *   `postStep`, so no change a part makes (the draft, a read it wants) misses storage, the
 *   refresh waiters or the alarm.
 * - `dueAt`: its own due time, which the scheduler takes the minimum of (`nextDeadline`): the
 *   `tick` of that time reaches its `wrap`, which does what is due before the engine's own
 *   deadlines and its read (`tick`).
 */
export interface EnginePart {
  readonly wrap: (inner: Reducer) => Reducer
  readonly dueAt?: (state: EngineState, config: EngineConfig) => number | null
}
