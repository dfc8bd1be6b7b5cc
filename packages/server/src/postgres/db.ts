import type { Pool, PoolClient } from 'pg'
import { isUnavailable, storeError } from './errors'

/** Where a statement runs: the pool (its own connection) or a transaction's client. */
export type Queryable = Pool | PoolClient

// Postgres holds no U+0000 in `text` nor in `jsonb` (it refuses the statement): a NUL character,
// which no chat text means, is recorded as U+FFFD, the replacement character, instead.
const replacement = '\uFFFD'
// In JSON text, `\u0000` escapes a NUL only after an even number of backslashes.
const escapedNul = /(?<!\\)((?:\\\\)*)\\u0000/g

/** `value` as a `jsonb` parameter (JSON text), its NUL characters replaced (see above). */
export function jsonParam(value: unknown): string {
  return JSON.stringify(value).replace(escapedNul, `$1${replacement}`)
}

const textParam = (value: unknown) =>
  typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', replacement) : value

/**
 * Runs one parameterized statement; its rows come back as `unknown` records, for `records.ts` to
 * parse. A lost connection throws `store_unavailable`.
 */
export async function query(
  db: Queryable,
  text: string,
  values: readonly unknown[] = [],
): Promise<Record<string, unknown>[]> {
  try {
    const result = await db.query<Record<string, unknown>>(text, values.map(textParam))
    return result.rows
  } catch (error) {
    throw storeError(error)
  }
}

/** Thrown by a transaction's work to roll it back and answer `value` (a refusal: nothing recorded). */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

// A deadlock between two transactions (Postgres aborts one) or a serialization failure: the
// aborted one is run again, from the start, a few times.
const retriedStates = new Set(['40P01', '40001'])
const attempts = 3

/**
 * Runs `work` in one transaction on one connection: committed if it resolves, rolled back if it
 * throws (and the error rethrown, or a `Rollback`'s value answered). A connection that failed is
 * dropped from the pool, not reused.
 */
export async function transaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(pool, work)
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (attempt < attempts && typeof code === 'string' && retriedStates.has(code)) continue
      throw storeError(error)
    }
  }
}

async function once<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let failure: unknown
  try {
    await client.query('BEGIN')
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    failure = error
    await client.query('ROLLBACK').catch(() => undefined)
    if (error instanceof Rollback) return error.value as T
    throw error
  } finally {
    // Given an error, the pool ends the connection instead of handing it out again.
    client.release(isUnavailable(failure) ? (failure as Error) : undefined)
  }
}
