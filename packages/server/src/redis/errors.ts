/**
 * What went wrong on the Redis bus:
 * - `bus_unavailable`: Redis could not be reached (down, restarting, the connection lost mid-command,
 *   or the bus was closed). Nothing was relayed or published beyond this instance: retry once Redis
 *   is back.
 * - `relay_timeout`: the Stop was published, but no answer came back from the main that owns the
 *   execution within `replyTimeoutMs` (that main is busy, cut off from Redis, or gone). Whether it
 *   cancelled is unknown: retry, or read the execution's record.
 */
export type RedisBusErrorCode = 'bus_unavailable' | 'relay_timeout'

/**
 * The typed error of `createRedisBus`: a code, a message that says what to do, and `retryable`
 * (always true: each code names a passing condition). Never a silent success.
 */
export class RedisBusError extends Error {
  override readonly name = 'RedisBusError'
  readonly retryable = true

  constructor(
    readonly code: RedisBusErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** The `bus_unavailable` error for a Redis command that failed (`doing` says what was tried). */
export function unavailable(doing: string, cause: unknown): RedisBusError {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new RedisBusError(
    'bus_unavailable',
    `Redis could not be reached while ${doing} (${reason}). Retry once Redis is back.`,
    { cause },
  )
}
