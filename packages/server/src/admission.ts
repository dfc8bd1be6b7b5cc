import type { Flavor } from './flavor'
import { errorResponse, RestError } from './http'
import { sseAnswer } from './sse'
import type { AdmissionRefusal, ThreadRecord } from './store/types'

/** The in-band answer to a message or resume refused because a turn runs in its thread. */
export const turnRunning = (): Response =>
  sseAnswer({
    type: 'error',
    message: 'A turn is already running in this conversation.',
    errorCode: 'turn_already_running',
  })

/**
 * One turn per thread: "New-message submission stays blocked while a turn runs" (where the flavor
 * refuses them). The in-band refusal of a competing message or resume, or undefined to admit it.
 * The store's admission decides again, atomically; this answers early from a read.
 */
export function turnRefusal(flavor: Flavor, thread: ThreadRecord): Response | undefined {
  if (!flavor.refusesConcurrentTurns || thread.activeExecutionId === null) return undefined
  return turnRunning()
}

/** The answer to an admission the store refused. */
export function refusalAnswer(reason: AdmissionRefusal): Response {
  switch (reason) {
    case 'turn_already_running':
      return turnRunning()
    case 'duplicate_message':
      // "A duplicate is answered with `done` alone — no queue id, no execution id".
      return sseAnswer({ type: 'done' })
    case 'thread_not_found':
      return sseAnswer({
        type: 'error',
        message: 'Session not found',
        errorCode: 'session_not_found',
      })
    case 'too_many_turns':
      return tooManyTurns()
  }
}

/** Seconds a refused client waits before it tries again (`Retry-After`). */
export const retryAfterSeconds = 5

/** 429: the user runs as many turns as `limits.maxRunningTurnsPerUser` allows. */
export function tooManyTurns(): Response {
  const error = new RestError(
    'too_many_turns',
    'You have too many turns running.',
    'Wait for one of them to end, or stop one, then send again.',
  )
  return errorResponse(error, { 'Retry-After': String(retryAfterSeconds) })
}

/** 503: the backend shuts down and admits no new turn; another instance (or a restart) will. */
export function shuttingDown(): Response {
  const error = new RestError(
    'shutting_down',
    'The server is shutting down.',
    'Send again in a few seconds.',
  )
  return errorResponse(error, { 'Retry-After': String(retryAfterSeconds) })
}

/** "Closing before execution-started abandons the request": nothing is recorded. */
export function abandoned(): Response {
  return new Response(null, { status: 499 })
}
