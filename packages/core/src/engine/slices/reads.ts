/**
 * History reads and the push channel: what asks for a read, a read's start and failure, and what
 * follows a read (a retry, a poll, or nothing). When a wanted read actually starts is the
 * scheduler's (`schedule.ts`).
 */
import { isThread } from '../../wire/contract/ids'
import { backoffDelay } from '../backoff'
import { activeExecutionId } from '../derive'
import type { Command, EngineAction, EngineConfig, EngineState, Step } from '../model'
import { step, wantRead } from './common'

type Action<T extends EngineAction['type']> = Extract<EngineAction, { type: T }>

/** Retries of a failed read while nothing runs (while a turn runs, reads retry without end). */
export const IDLE_READ_RETRIES = 3

/**
 * Polls for a record that lags behind a turn this tab saw end, while nothing runs (about a minute
 * at the default `poll`); a push notification, `refresh()` or the page coming back reads again.
 */
export const LAGGING_RECORD_POLLS = 8

export function pushMessage(state: EngineState, { message }: Action<'push-message'>): Step {
  if (!isThread(state.key, message.data)) return step(state)
  // A notification about this thread: a read is wanted, and the channel works.
  return step(wantRead({ ...state, reads: { ...state.reads, polls: 0, lagPolls: 0 } }))
}

/**
 * When the next history read may start (scheduler time), or `null` for no read: the one place
 * that decides when a read happens; the `tick` of that time starts it (a `read` command).
 *
 * - One read in flight at a time; a read asked meanwhile waits behind it.
 * - This tab's own live stream is newer than any recorded batch, so reads asked while it streams
 *   wait for its end, unless a Stop was accepted (completion comes from the record) or the stream
 *   went silent for `streamSilenceMs` (a stalled stream, or a proxy holding it).
 * - Reads start at least `minReadIntervalMs` apart (a `refresh()` skips that), so a burst of
 *   notifications about batches costs two reads; never before the server's `Retry-After`.
 */
export function readDueAt(state: EngineState, config: EngineConfig): number | null {
  const { reads, own, stop } = state
  if (!state.active || reads.inFlight) return null
  const due = reads.wanted ? AT_ONCE : reads.followUpAt
  if (due === null) return null
  const spacing =
    reads.urgent || reads.lastStartedAt === null
      ? AT_ONCE
      : reads.lastStartedAt + config.minReadIntervalMs
  const stopAccepted = stop?.kind === 'execution' && stop.accepted
  const held =
    own && !own.timedOut && !stopAccepted ? own.lastEventAt + config.streamSilenceMs : AT_ONCE
  return Math.max(due, spacing, held, reads.notBefore ?? AT_ONCE)
}

/**
 * "Now, whatever the clock says": earlier than any scheduler time, and, unlike `-Infinity`, a
 * number JSON keeps (a step is data: `engine/trace.ts`).
 */
export const AT_ONCE = Number.MIN_SAFE_INTEGER

/**
 * The query's function ran: the read this engine asked for (it takes the fetch's tag), or one the
 * app started (`invalidateQueries`, `refetchQueries`), which is a read like any other.
 */
export function readStarted(state: EngineState, { at, fetch }: Action<'read-started'>): Step {
  const { onConnect: _, ...reads } = state.reads
  if (reads.inFlight && reads.fetch === null)
    return step({ ...state, reads: { ...state.reads, fetch } })
  return step({
    ...state,
    reads: {
      ...reads,
      inFlight: true,
      fetch,
      count: reads.count + 1,
      wanted: false,
      urgent: false,
      followUpAt: null,
      lastStartedAt: at,
    },
  })
}

/**
 * A read ended with no answer: its fetch was aborted, or the query that carried it was removed or
 * reset (`removeQueries`, `resetQueries`, `clear`, a garbage collection). A replaced fetch's end
 * is not the read's. What the read was for is still wanted: the next read runs.
 */
export function readCancelled(state: EngineState, { fetch }: Action<'read-cancelled'>): Step {
  const { reads } = state
  if (!reads.inFlight || (fetch !== null && reads.fetch !== null && fetch !== reads.fetch))
    return step(state)
  const ended = { ...state, reads: { ...reads, inFlight: false, fetch: null } }
  const needed = !state.synced || state.cut || activeExecutionId(state) !== null
  return step(needed ? wantRead(ended) : ended)
}

export function pushChanged(
  state: EngineState,
  action: Action<'push-changed'>,
  config: EngineConfig,
): Step {
  const lost = state.push.lost || (state.push.connected && !action.connected)
  if (!action.connected)
    return step(
      followUp({ ...state, push: { connected: false, lost } }, action.at, action.random, config),
    )
  // Notifications sent while the channel was not there are missed: once a read has happened (or
  // the channel was lost), read again — not a thread a read found missing, which the first
  // message (a push, this tab's own post, `refresh()`) reads next [R-READ-404-ONCE]. Polling can
  // stop (its backoff is kept: a channel that drops again at once must not restart it).
  const connected = { ...state, push: { connected: true, lost: false } }
  const next = followUp(connected, action.at, action.random, config)
  if (!lost && (state.reads.count === 0 || state.notFound)) return step(next)
  const wanted = wantRead(next)
  const onConnect = !lost && !next.reads.wanted && wanted.reads.wanted
  return step(onConnect ? { ...wanted, reads: { ...wanted.reads, onConnect } } : wanted)
}

export function readFailed(
  state: EngineState,
  action: Action<'read-failed'>,
  config: EngineConfig,
): Step {
  const { error } = action
  const failures = state.reads.failures + 1
  // The server's Retry-After, bounded by the longest backoff (a stale header must not stall us).
  const notBefore =
    error.retryAfterMs === undefined
      ? state.reads.notBefore
      : action.at + Math.min(error.retryAfterMs, config.retry.maxMs)
  const reads = { ...state.reads, inFlight: false, fetch: null, failures, notBefore }
  // A thread this tab just posted to may not be recorded yet (n8n 2.41 answers 404 until the
  // first output): not found is an answer only when this tab knows of no turn there, and has no
  // POST stream open (a turn a client without the released part reads unshown).
  const justPosted =
    state.own !== null ||
    state.streams.length > 0 ||
    (state.live !== null && !state.kept) ||
    state.settled.length > 0
  // A page instead of the API's JSON is a wrong URL or a proxy, not a missing thread.
  const page = error.routeMissing === true
  // A read on its way when the app put a newer record here says nothing of that record.
  const stale = state.appRecordAfterRead !== null && state.reads.count <= state.appRecordAfterRead
  const missing = error.code === 'not_found' && !page && !stale
  const notFound = missing && !justPosted
  // Not found, or not this user's: nothing of it stays on screen (a transcript kept across a
  // reload included).
  const gone = notFound || (!page && !stale && error.code === 'forbidden')
  const cleared = gone
    ? { ...state, recorded: null, recordedHere: false, live: null, kept: false, settled: [] }
    : state
  // What `persist` kept of the thread goes too, by this rule and no other.
  const forget: Command[] = gone && config.keepLive ? [{ type: 'forget-kept' }] : []
  // A 404 is an answer, never a `readError` (issue 35, row g: a thread the first message then
  // creates showed "cannot read" all through its first answer) [R-READ-404-NO-ERROR].
  if (notFound) {
    // The read wanted for the channel's connect would ask again what this one just answered.
    const { onConnect, ...answered } = reads
    return step(
      {
        ...cleared,
        reads: { ...answered, followUpAt: null, wanted: reads.wanted && !onConnect },
        notFound: true,
        synced: true,
        cut: false,
        readError: null,
      },
      ...forget,
    )
  }
  const retried = followUp(
    { ...cleared, reads, readError: error },
    action.at,
    action.random,
    config,
  )
  // Not recorded yet (a 404 right after this tab posted): read again as after a failure, with no
  // error meanwhile: the thread is coming.
  return step(missing ? { ...retried, readError: state.readError } : retried, ...forget)
}

/**
 * What follows a read or a change of the push channel: retry a failed read with bounded backoff
 * while anything is unknown or running (and a few times even when nothing runs, so a passing fault
 * leaves no stale `readError`); poll while an execution runs and no push channel is connected;
 * and poll while the record lags behind a turn this tab saw end, since the notification of its
 * last batch may already have been spent on an earlier read.
 */
export function followUp(state: EngineState, at: number, random: number, config: EngineConfig) {
  const { reads } = state
  const running = activeExecutionId(state) !== null || state.stop !== null
  const recordLags = state.live?.ended === true || state.settled.length > 0
  const unknown = state.cut || !state.synced
  const jitter = () => random
  // A failed read is retried (a 404 that says the thread is not there is no failure).
  if (state.readError) {
    if (running || recordLags || unknown || reads.failures <= IDLE_READ_RETRIES) {
      const delay = backoffDelay(
        reads.failures - 1,
        config.retry.baseMs,
        config.retry.maxMs,
        jitter,
      )
      return {
        ...state,
        reads: { ...reads, followUpAt: Math.max(at + delay, reads.notBefore ?? AT_ONCE) },
      }
    }
    return { ...state, reads: { ...reads, followUpAt: null } }
  }
  // A record that lags is polled for a while once nothing runs, not for ever: a turn the server
  // never recorded (it lost it) would keep an open tab reading every `poll.maxMs`. The count
  // starts afresh while a turn runs and on a notification.
  const lagPolls = running ? 0 : reads.lagPolls
  if ((running && !state.push.connected) || (recordLags && lagPolls < LAGGING_RECORD_POLLS)) {
    const delay = backoffDelay(reads.polls, config.poll.baseMs, config.poll.maxMs, jitter)
    return {
      ...state,
      reads: {
        ...reads,
        polls: reads.polls + 1,
        lagPolls: running ? 0 : lagPolls + 1,
        followUpAt: at + delay,
      },
    }
  }
  // Nothing to poll for. The poll backoff starts afresh only once nothing runs.
  const polls = running ? reads.polls : 0
  return { ...state, reads: { ...reads, polls, lagPolls, followUpAt: null } }
}
