/**
 * A part of the deployment that is away for a while — the record (Postgres's `store_unavailable`)
 * or the bus (Redis's `bus_unavailable`, `relay_timeout`) — answered on every route as one typed
 * 503 with `Retry-After`. Recognised by shape (a `code` of these and `retryable: true`), so that
 * the main entry never imports `pg` or `ioredis`: any store or bus may throw them.
 */
import { RestError } from './http'

/** Seconds a client waits before it retries a request that met an unavailable part. */
export const retryAfterSeconds = 2

const answers = {
  store_unavailable: [
    'The chat record cannot be reached right now; nothing was changed by this request.',
    'Retry after the seconds in Retry-After.',
  ],
  bus_unavailable: [
    'The Stop could not be relayed to the server running this turn; whether it stops is unknown.',
    'Send the Stop again after the seconds in Retry-After, or read the turn from the history.',
  ],
  relay_timeout: [
    'The server running this turn did not answer the Stop in time; whether it stops is unknown.',
    'Send the Stop again after the seconds in Retry-After, or read the turn from the history.',
  ],
} as const

type UnavailableCode = keyof typeof answers

/**
 * The REST error for `error` when it says a part of the deployment is away (our own message: no
 * cause, host or stack reaches the answer), else undefined.
 */
export function unavailableError(error: unknown): RestError | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, retryable } = error as { code?: unknown; retryable?: unknown }
  if (retryable !== true || typeof code !== 'string' || !Object.hasOwn(answers, code))
    return undefined
  const [message, hint] = answers[code as UnavailableCode]
  return new RestError(code as UnavailableCode, message, hint)
}

/** Whether `error` is such a passing condition (a store or bus that is away). */
export function isRetryable(error: unknown): boolean {
  return unavailableError(error) !== undefined
}

/**
 * Runs `operation` until it does not fail as unavailable: the end of a turn must reach the record
 * even when the store restarts meanwhile, or the turn would stay `running` for as long as its main
 * lives. Waits 250 ms, doubling to 5 s, for at most `attempts` tries (about two minutes), then
 * rejects with the last error: by then the main is cut off, and once it stops, its lease lapses
 * and another main ends the turn (`instance_lost`). Any other error rejects at once.
 */
export async function retryWhileUnavailable<T>(
  operation: () => Promise<T>,
  timers: { setTimeout(callback: () => void, ms: number): unknown },
  attempts = 30,
): Promise<T> {
  for (let attempt = 1, waitMs = 250; ; attempt++, waitMs = Math.min(waitMs * 2, 5000)) {
    try {
      return await operation()
    } catch (error) {
      if (!isRetryable(error) || attempt >= attempts) throw error
      await new Promise<void>((resolve) => timers.setTimeout(resolve, waitMs))
    }
  }
}
