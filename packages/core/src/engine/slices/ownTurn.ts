/**
 * This tab's own turn: the gate, the POST, how its stream's first events are read (a refusal,
 * an announced turn, or one the server began without announcing it), its events and its end.
 */
import type { TurnEvent } from '../../wire/contract/events'
import type { TurnRequest } from '../../wire/contract/requests'
import {
  errorRecord,
  inBandError,
  refusalError,
  type ErrorRecord,
} from '../../wire/contract/errors'
import { openSuspensions, sessionStatus } from '../derive'
import { applyTurnEvents, startTurn, type LiveTurn } from '../fold'
import type {
  EngineAction,
  EngineConfig,
  EngineState,
  OwnTurn,
  Step,
  StepEvent,
  SubmitResult,
} from '../model'
import { sendsAs } from '../draft'
import {
  andThen,
  isStandIn,
  learn,
  renamed,
  reported,
  setAside,
  settled,
  step,
  wantRead,
  withBase,
} from './common'
import { renameWatched, watchAs } from './endings'
import { onOwnTurnAnnounced, onOwnTurnNotTaken, onOwnTurnUnannounced, underStop } from './stop'
import { explain } from '../../wire/contract/explain'

type Action<T extends EngineAction['type']> = Extract<EngineAction, { type: T }>
type EventOf<T extends TurnEvent['type']> = Extract<TurnEvent, { type: T }>

/** Codes of a POST that got no usable answer: the server may have taken the turn anyway. */
export const mayHaveBeenTaken: ReadonlySet<string> = new Set([
  'network_error',
  'server_error',
  'invalid_response',
  'timeout',
])

export const turnOptions = (config: EngineConfig, stampedAt: number) => ({
  delegationCharLimit: config.delegationCharLimit,
  now: () => stampedAt,
})

/** `submit(text?)` and `resume()`: through the gate, at most one turn per thread. */
export function requestTurn(
  state: EngineState,
  action: Action<'submit-requested'> | Action<'resume-requested'>,
): Step {
  const { request } = action
  if (sessionStatus(state) !== 'idle') return settled(request, { outcome: 'busy' }, step(state))
  if (
    action.type === 'resume-requested' &&
    !openSuspensions(state).some((s) => s.toolCallId === action.toolCallId)
  ) {
    const error = errorRecord(
      'invalid_request',
      `This tool call is not waiting for an answer.${explain('not-waiting')}`,
    )
    return settled(request, { outcome: 'failed', error }, step(state))
  }
  const text = action.type === 'submit-requested' ? (action.text ?? state.draft) : null
  if (text !== null && text.trim() === '') {
    const error = errorRecord('invalid_request', `The message is empty.${explain('empty-message')}`)
    return settled(request, { outcome: 'failed', error }, step(state))
  }
  // A draft whose fate is not known (its POST failed unanswered, its page left) is the same
  // message sent again: under the same id, so a server that dedupes takes it once, and a record
  // that holds it says so [R-DRAFT-SENT-ID].
  const messageId =
    action.type === 'submit-requested' ? sendsAs(state, text ?? '', action.messageId) : null
  // A thread with no readable history is new: its first message creates it.
  const recorded = state.recorded
  const newSession = !recorded || recorded.messages.length === 0
  const turnRequest: TurnRequest =
    action.type === 'submit-requested'
      ? {
          kind: 'message',
          body: {
            message: text ?? '',
            sessionId: state.key.threadId,
            ...(newSession && { newSession: true as const }),
            messageId: messageId ?? action.messageId,
          },
        }
      : {
          kind: 'resume',
          body: {
            runId: action.runId,
            toolCallId: action.toolCallId,
            resumeData: action.resumeData,
          },
        }
  const own: OwnTurn = {
    token: request,
    text,
    resuming: action.type === 'resume-requested' ? action.toolCallId : null,
    phase: 'posting',
    since: action.at,
    lastEventAt: action.at,
    timedOut: false,
    settled: false,
    batches: 0,
    request: turnRequest,
    attempts: 1,
    ...(action.type === 'submit-requested' &&
      state.draftSentAs != null &&
      messageId === state.draftSentAs && { resent: true as const }),
  }
  const next = { ...state, own, streams: [...state.streams, request], error: null }
  // The other tabs hold their gate from now until this message's turn begins or is not taken up.
  const posted = reported(step(next, { type: 'post', token: request, request: turnRequest }), {
    type: 'posting',
    active: true,
  })
  return text === null ? posted : reported(posted, messageEvent(own, 'posted'))
}

/** What happened to this tab's message, for the draft's fate (`draftFate`) and the queue. */
const messageEvent = (own: OwnTurn, fate: 'posted' | 'taken' | 'refused'): StepEvent => ({
  type: 'message',
  fate,
  token: own.token,
  text: own.text,
  messageId: own.request.kind === 'message' ? (own.request.body.messageId ?? null) : null,
  ...(own.resent && { resent: true }),
})

/** This tab's message is no longer on its way (the other tabs' hold of it ends). */
const notPosting: StepEvent = { type: 'posting', active: false }

/** The server took this tab's message: reported (a draft it was clears). */
const taken = (done: Step, own: OwnTurn) => reported(done, messageEvent(own, 'taken'))

/** `submit()`'s outcome, unless it has one already (a timed-out message was told it failed). */
const settleSubmit = (own: OwnTurn, result: SubmitResult<ErrorRecord>, done: Step): Step =>
  own.settled ? done : settled(own.token, result, done)

/**
 * The error a refusal of this tab's message shows: its own, but for the queue's send (a negative
 * token) refused because a turn runs, which is no fault of the person's — the message simply waits
 * in the queue (the error shown before stays). The one rule of it [R-QUEUE-CLIENT-ONCE].
 */
const shownError = (state: EngineState, own: OwnTurn, error: ErrorRecord) =>
  own.token < 0 && error.code === 'turn_already_running' ? state.error : error

/** This tab's message was not taken up (refused, failed, cut or timed out before its turn began). */
function notTakenUp(
  state: EngineState,
  own: OwnTurn,
  error: ErrorRecord,
  change: Partial<EngineState>,
): Step {
  const next = { ...state, ...change }
  return andThen(
    settleSubmit(
      own,
      { outcome: 'failed', error },
      // Said once: a timed-out message said so already.
      own.timedOut ? step(next) : reported(step(next), notPosting),
    ),
    (s) => onOwnTurnNotTaken(s, own.token),
  )
}

/**
 * The server's answer to this tab's POST began (a turn stream), or another answer named the
 * server's capabilities: whether it dedupes messages (`message-dedupe`) is learned for every
 * later message too.
 */
export function turnOpened(state: EngineState, action: { capabilities: readonly string[] }): Step {
  const dedupesMessages = action.capabilities.includes('message-dedupe')
  if (state.dedupesMessages === dedupesMessages) return step(state)
  return step({ ...state, dedupesMessages })
}

/**
 * A message whose POST lost its answer before any event (no answer at all, or a stream cut
 * before its first event) is sent once more, with the same ids, where the server dedupes: if the
 * first POST was taken, the second is answered with a bare `done` (`alreadyAccepted`) and
 * records nothing. Never on a server not known to dedupe (released n8n 2.41), never a resume
 * (no id to dedupe by), never after its acceptance deadline passed.
 */
function retried(state: EngineState, own: OwnTurn, lost: boolean): Step | null {
  const sendAgain =
    lost &&
    own.phase === 'posting' &&
    !own.timedOut &&
    own.attempts < 2 &&
    own.request.kind === 'message' &&
    own.request.body.messageId !== undefined &&
    state.dedupesMessages === true
  if (!sendAgain) return null
  const streams = [...state.streams.filter((token) => token !== own.token), own.token]
  return step(
    { ...state, streams, own: { ...own, attempts: own.attempts + 1 } },
    { type: 'post', token: own.token, request: own.request },
  )
}

export function postFailed(state: EngineState, action: Action<'post-failed'>): Step {
  const streams = state.streams.filter((token) => token !== action.token)
  const { own } = state
  if (own?.token !== action.token) return step({ ...state, streams })
  const again = retried(state, own, action.error.code === 'network_error')
  if (again) return again
  // Read either way: a refusal such as turn_already_running means another turn runs.
  const maybe = mayHaveBeenTaken.has(action.error.code)
  const failed = notTakenUp(wantRead({ ...state, streams }), own, action.error, {
    own: null,
    error: shownError(state, own, action.error),
    cut: state.cut || maybe,
  })
  return maybe ? failed : reported(failed, messageEvent(own, 'refused'))
}

/**
 * Whether these events begin this tab's turn without `execution-started` (the released n8n 2.41's
 * answer, whose first event is a delta): the one way `turnEvents` routes there, which a part may
 * begin its own way before the engine streams the batch, as the released platform's does.
 */
export function beginsUnannounced(state: EngineState, action: Action<'turn-events'>): boolean {
  const { own } = state
  const first = action.events[0]?.type
  return (
    own?.token === action.token &&
    own.phase === 'posting' &&
    first !== 'execution-started' &&
    first !== 'message-queued' &&
    first !== 'error' &&
    (first !== 'done' || own.attempts < 2)
  )
}

export function turnEvents(
  state: EngineState,
  action: Action<'turn-events'>,
  config: EngineConfig,
): Step {
  const { own } = state
  if (own?.token !== action.token) return step(state) // a detached stream: shown nowhere
  if (own.phase === 'streaming') return streamed(state, own, action.events, action, config)
  const [first] = action.events
  if (beginsUnannounced(state, action)) return startUnannounced(state, own, first)
  if (first?.type === 'message-queued' && own.phase === 'posting') {
    const queued = queuedByServer(state, own, first.queueId)
    const rest = action.events.slice(1)
    return rest.length === 0
      ? queued
      : andThen(queued, (s) => turnEvents(s, { ...action, events: rest }, config))
  }
  if (own.phase === 'queued' && first?.type !== 'execution-started')
    return leftServerQueue(state, own, first)
  if (first?.type === 'done' && own.attempts > 1) return alreadyAccepted(state, own)
  if (first?.type === 'error') {
    // Refused before it started (e.g. turn_already_running): nothing was recorded, and its
    // message id is no draft's fate to wait for.
    const error = refusalError(first)
    return reported(
      notTakenUp(wantRead(state), own, error, { own: null, error: shownError(state, own, error) }),
      messageEvent(own, 'refused'),
    )
  }
  // What is left begins with `execution-started` (`beginsUnannounced` took every other).
  const announced = first as EventOf<'execution-started'>
  const started = startOwnTurn(state, own, action, announced.executionId, announced.sessionId)
  const rest = action.events.slice(1)
  const startedOwn = started.state.own
  if (rest.length === 0 || !startedOwn) return started
  return andThen(started, (s) => streamed(s, startedOwn, rest, action, config))
}

/**
 * A bare `done` to a message sent again: the server had taken it the first time (its answer was
 * lost). Accepted, with no execution id; what runs and what was recorded come from a read.
 */
function alreadyAccepted(state: EngineState, own: OwnTurn): Step {
  // `cut`: this tab lost track of the turn; a fresh read shows it (running, or ended by now).
  const next = wantRead({ ...state, own: null, error: null, cut: true })
  return andThen(
    taken(
      settleSubmit(
        own,
        { outcome: 'accepted', executionId: null },
        reported(step(next), notPosting),
      ),
      own,
    ),
    // A Stop held for this message has no execution id to wait for: what runs is the record's.
    (s) => onOwnTurnNotTaken(s, own.token),
  )
}

/**
 * The server took the message into its own queue (`message-queued`, the platform's next era):
 * accepted, so the draft clears and `submit()` resolves, with no execution yet and no deadline.
 * Its turn streams on this same POST once taken up; the gate of the other tabs is the thread's
 * (a turn runs ahead of it).
 */
function queuedByServer(state: EngineState, own: OwnTurn, queueId: string): Step {
  const next = { ...state, own: { ...own, phase: 'queued' as const, settled: true }, error: null }
  return taken(
    settleSubmit(
      own,
      { outcome: 'accepted', executionId: null, queueId },
      reported(step(next), notPosting),
    ),
    own,
  )
}

/**
 * A message the server had queued ended before its turn began: removed from the queue (an
 * `error` says so), or steered into the running turn (a bare `done`). Nothing of it runs here;
 * the record shows where it went.
 */
function leftServerQueue(state: EngineState, own: OwnTurn, first: TurnEvent | undefined): Step {
  const error = first?.type === 'error' ? inBandError(first) : state.error
  return andThen(step(wantRead({ ...state, own: null, error })), (s) =>
    onOwnTurnNotTaken(s, own.token),
  )
}

/**
 * A turn that began without `execution-started`, met by the engine (the released platform's part
 * begins it its own way, `beginsUnannounced`): the message was taken, and its stream is read to
 * its end, shown nowhere (closing it would cancel the turn on such a server; only `dispose()`
 * does). The open stream keeps the gate shut (`cut`; a 404 meanwhile is "not recorded yet"), a
 * Stop held for it says it cannot stop it, and what runs is for reads to show — which on such a
 * server need the part too: this warning, the read's error and the Stop's say which option to pass.
 */
function startUnannounced(state: EngineState, own: OwnTurn, first: TurnEvent | undefined): Step {
  return andThen(
    step(state, {
      type: 'warn',
      message: `A turn stream began with "${first?.type}", not "execution-started".${explain('unannounced-turn')}`,
    }),
    (s) => onOwnTurnUnannounced(s, own.token),
    // Such a server may cancel a turn whose POST closes, and has no Stop by id.
    (s) => alreadyAccepted({ ...s, server: learn(s.server, false) }, own),
  )
}

/**
 * This tab's message began its turn `executionId` (the server's, or a stand-in's: the released
 * platform's part, which passes the executions ended before it, `after`, and has taken a Stop held
 * for the message out first, to stop it its own way); a Stop held for it names that execution now.
 */
export function startOwnTurn(
  state: EngineState,
  own: OwnTurn,
  action: Action<'turn-events'>,
  executionId: string,
  sessionId = state.key.threadId,
  after: readonly string[] = [],
): Step {
  const announced = !isStandIn(executionId)
  const resumed = own.resuming
    ? openSuspensions(state).find((s) => s.toolCallId === own.resuming)
    : undefined
  const payload = resumed?.suspendPayload as { toolName?: unknown; input?: unknown } | undefined
  const started = startTurn({
    executionId,
    sessionId,
    createdAt: new Date(action.stampedAt).toISOString(),
    ...(own.text !== null && { message: own.text }),
    ...(own.resuming &&
      typeof payload?.toolName === 'string' && {
        resumes: { toolCallId: own.resuming, toolName: payload.toolName, input: payload.input },
      }),
  })
  const live = withBase(started, after)
  const next: EngineState = {
    ...watchAs(state, executionId, 'own'),
    ...setAside(state),
    live,
    liveAfterRead: state.reads.count,
    own: { ...own, phase: 'streaming', lastEventAt: action.at, timedOut: false, settled: true },
    // The spec's servers announce every turn; one that does not speaks the released protocol.
    server: learn(state.server, announced),
    // Hidden until a read started from now on shows the record (one started before cannot reopen it).
    answered: own.resuming
      ? [...state.answered, { toolCallId: own.resuming, afterRead: state.reads.count }]
      : state.answered,
    cut: false,
    notFound: false,
    error: null,
  }
  const accepted = taken(
    settleSubmit(
      own,
      { outcome: 'accepted', executionId: announced ? executionId : null },
      reported(step(next), { type: 'own-turn-began', turn: live, seq: 0, after }),
    ),
    own,
  )
  return andThen(accepted, (s) => onOwnTurnAnnounced(s, own.token, executionId))
}

/** A batch of events of this tab's accepted turn, relayed to the other tabs as batch `seq`. */
function streamed(
  state: EngineState,
  own: OwnTurn,
  events: readonly TurnEvent[],
  action: Action<'turn-events'>,
  config: EngineConfig,
): Step {
  const { live } = state
  if (!live || live.ended) return step(state)
  const seq = own.batches + 1
  const folded = applyTurnEvents(live, events, turnOptions(config, action.stampedAt))
  const next = adoptAnnouncedId(folded, events)
  state = renameWatched(state, live.executionId, next.executionId)
  const batch: StepEvent = { type: 'own-turn-streamed', executionId: live.executionId, seq, events }
  if (!next.ended) {
    const streaming = {
      ...state,
      live: next,
      own: { ...own, lastEventAt: action.at, batches: seq },
    }
    return reported(step(streaming), batch)
  }
  // The turn's terminal event: this tab's part is over; the record says the rest.
  const failed = events.find((event) => event.type === 'error')
  const error = failed?.type === 'error' ? inBandError(failed) : state.error
  const ended = wantRead({ ...state, live: underStop(next, state.stop), own: null, error })
  return reported(step(failed ? reopenAnswer(ended, own) : ended), batch)
}

/**
 * A resume whose turn failed (an error event, a cut stream) before any record said the answer was
 * taken: its suspension is answerable again until a record says otherwise, as the platform's own
 * client keeps the approval card so the person can try again. Which endings reopen the card is a
 * table, one row per ending ([R-SUSPENSION-REOPEN](../../../../../docs/rules.md#r-suspension-reopen)):
 * a failure does; `done`, a new suspension, this tab closing the stream, and any ending after a
 * Stop of the turn (the server's cancel cuts the stream or says `error`) do not. A Stop under way
 * while this tab's own turn runs is that turn's: the gate let the resume through only when idle.
 */
function reopenAnswer(state: EngineState, own: OwnTurn): EngineState {
  if (!own.resuming || state.stop !== null) return state
  return { ...state, answered: state.answered.filter((a) => a.toolCallId !== own.resuming) }
}

/** A stand-in id gives way to the execution id that `done` names. */
function adoptAnnouncedId(turn: LiveTurn, events: readonly TurnEvent[]): LiveTurn {
  if (!isStandIn(turn.executionId)) return turn
  const done = events.find((event) => event.type === 'done')
  const executionId = done?.type === 'done' ? done.executionId : undefined
  return executionId ? renamed(turn, executionId) : turn
}

export function streamEnded(state: EngineState, action: Action<'stream-ended'>): Step {
  const streams = state.streams.filter((token) => token !== action.token)
  const { own } = state
  if (own?.token !== action.token) return step({ ...state, streams })
  const { end } = action
  const again = retried(state, own, end.kind === 'cut')
  if (again) return again
  const ended = wantRead({
    ...state,
    streams,
    own: null,
    cut: state.cut || end.kind !== 'terminal',
  })
  // Accepted already (a turn, or the server's queue): the record says the rest.
  if (own.phase !== 'posting') return step(end.kind === 'cut' ? reopenAnswer(ended, own) : ended)
  const error =
    end.kind === 'cut'
      ? end.error
      : errorRecord(
          'disposed',
          `The session was disposed before the server accepted the message.${explain('disposed')}`,
        )
  return notTakenUp(ended, own, error, {})
}

/** When a posted message stops waiting for the server's acceptance, or `null`. */
export function submitDueAt({ own }: EngineState, config: EngineConfig): number | null {
  return own?.phase === 'posting' && !own.timedOut ? own.since + config.submitTimeoutMs : null
}

/** The server neither accepted nor refused within `submitTimeoutMs`: it may have taken the turn. */
export function submitDeadline(state: EngineState, at: number, config: EngineConfig): Step {
  const due = submitDueAt(state, config)
  const { own } = state
  if (due === null || at < due || !own) return step(state)
  // The stream stays open (closing it could cancel the turn on some servers); the record
  // decides, the draft stays.
  const error = errorRecord(
    'timeout',
    `The server did not confirm the message within ${config.submitTimeoutMs} ms.${explain('submit-timeout')}`,
  )
  return notTakenUp(wantRead(state), own, error, {
    own: { ...own, timedOut: true, settled: true },
    cut: true,
    error,
  })
}
