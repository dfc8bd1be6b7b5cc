import type { Flavor } from './flavor'
import { sseAnswer } from './sse'
import type { ThreadRecord } from './store'

/**
 * One turn per thread: "New-message submission stays blocked while a turn runs" (where the flavor
 * refuses them). The in-band refusal of a competing message or resume, or undefined to admit it.
 */
export function turnRefusal(flavor: Flavor, thread: ThreadRecord): Response | undefined {
  if (!flavor.refusesConcurrentTurns || thread.activeExecutionId === null) return undefined
  return sseAnswer({
    type: 'error',
    message: 'A turn is already running in this conversation.',
    errorCode: 'turn_already_running',
  })
}

/** "Closing before execution-started abandons the request": nothing is recorded. */
export function abandoned(): Response {
  return new Response(null, { status: 499 })
}
