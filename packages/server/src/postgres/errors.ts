/**
 * What can go wrong between the server and its Postgres, as one error with a `code`:
 * - `store_unavailable`: Postgres cannot be reached, or it dropped the connection (down, restarting,
 *   out of connections). Retryable: the backend answers 503 with `Retry-After`, nothing was recorded
 *   by the failed call beyond what its transaction committed.
 * - `malformed_row`: a row read back does not have the shape this version writes (a hand edit,
 *   another version's data). Never trusted, never guessed at: fix or remove the row.
 * - `migration_changed`: a migration already applied differs from the file of the same version
 *   (an edited migration). Restore the file; add a new migration for a new change.
 * - `migration_invalid`: a file in the migrations folder is not named `NNN_name.sql`.
 */
export type PostgresStoreErrorCode =
  'store_unavailable' | 'malformed_row' | 'migration_changed' | 'migration_invalid'

const brand = Symbol.for('@preview-chat/server/PostgresStoreError')

/** The error of the Postgres store (see `PostgresStoreErrorCode`). */
export class PostgresStoreError extends Error {
  override readonly name = 'PostgresStoreError'
  readonly code: PostgresStoreErrorCode
  /** Whether the same call may succeed later (Postgres back): true for `store_unavailable` only. */
  readonly retryable: boolean
  readonly [brand] = true

  constructor(code: PostgresStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.retryable = code === 'store_unavailable'
  }

  /** True for a `PostgresStoreError`, also one made by another copy of this package. */
  static isInstance(value: unknown): value is PostgresStoreError {
    return typeof value === 'object' && value !== null && brand in value
  }
}

// Postgres's own codes for "the connection, not the statement, failed": class 08 (connection
// exception), the server shutting down or starting (57P01-57P03), and no free connection (53300).
const unavailableStates = /^(08|57P0[123]$|53300$)/
// Node's, for a socket that could not connect or broke.
const socketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
])
// node-postgres's own errors for a lost or never-made connection (they carry no code).
const poolMessages = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'is not queryable',
]

/** Whether `error`, thrown by `pg`, means Postgres could not be reached (see `store_unavailable`). */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && (socketCodes.has(code) || unavailableStates.test(code)))
    return true
  if (poolMessages.some((message) => error.message.includes(message))) return true
  // An AggregateError (a host with several addresses, each refused) is unavailable if its parts are.
  return error instanceof AggregateError && error.errors.some(isUnavailable)
}

/** `error` as the store throws it: `store_unavailable` where Postgres could not be reached. */
export function storeError(error: unknown): unknown {
  if (PostgresStoreError.isInstance(error) || !isUnavailable(error)) return error
  return new PostgresStoreError(
    'store_unavailable',
    "Postgres cannot be reached (down, restarting or out of connections). Retry later; check that the database at the store's connection string is up.",
    { cause: error },
  )
}
