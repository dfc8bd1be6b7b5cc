import pg from 'pg'
import type { PreviewChatStore } from '../store/types'
import { query } from './db'
import { leaseOperations } from './lease'
import { migrate as applyMigrations } from './migrate'
import { queueOperations } from './queue'
import { executionOf, executionSelect, threadOf, threadSelect } from './records'
import { runOperations } from './runs'
import { countRunningOf, keyValues, keyWhere, readThreadWhere } from './threads'
import { turnOperations } from './turns'

/** Where the store's Postgres is, and how to start on it. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`: the store makes (and ends) its own pool. */
  connectionString?: string
  /** Or a `pg` Pool of the app's (the store never ends it). */
  pool?: pg.Pool
  /**
   * Applies the package's migrations before the store is used (default true): several instances
   * starting at once migrate once. False where a team applies the SQL files itself.
   */
  migrate?: boolean
  /**
   * Hears the errors of idle connections (Postgres restarted, a connection cut): the pool drops
   * such a connection and opens another when needed. Without it they are ignored, never thrown.
   */
  onPoolError?: (error: Error) => void
}

/** The record in Postgres (`PreviewChatStore`), and its pool. */
export interface PostgresStore extends PreviewChatStore {
  readonly pool: pg.Pool
  /** Ends the pool the store made (not a pool it was given); again, does nothing more. */
  close(): Promise<void>
}

/**
 * The store of a deployment of several instances: every operation one transaction (or one
 * statement) on Postgres, so that all instances share one record and one gate per thread. Throws
 * `PostgresStoreError` (`store_unavailable`) when Postgres cannot be reached, at start as later.
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const owned = !options.pool
  const pool =
    options.pool ??
    new pg.Pool({
      connectionString: options.connectionString,
      // A request waits this long for a connection when Postgres is down, then fails as
      // `store_unavailable` rather than hanging.
      connectionTimeoutMillis: 5_000,
    })
  // node-postgres emits an idle connection's error on the pool: unheard, it would end the process.
  pool.on('error', (error) => options.onPoolError?.(error))
  // A connection lost while checked out (Postgres restarted mid-transaction) emits `error` on its
  // client, which the pool hears only while idle: unheard, it too would end the process. The
  // statement running on it fails on its own, as `store_unavailable`.
  pool.on('connect', (client) => client.on('error', (error) => options.onPoolError?.(error)))
  try {
    if (options.migrate !== false) await applyMigrations(pool)
  } catch (error) {
    if (owned) await pool.end()
    throw error
  }
  let closed: Promise<void> | undefined
  return {
    pool,
    close: () => (closed ??= owned ? pool.end() : Promise.resolve()),
    ...turnOperations(pool),
    ...runOperations(pool),
    ...queueOperations(pool),
    ...leaseOperations(pool),
    ...readOperations(pool),
  }
}

function readOperations(
  pool: pg.Pool,
): Pick<
  PreviewChatStore,
  | 'readThread'
  | 'hasMessageId'
  | 'readExecution'
  | 'countRunning'
  | 'listRunning'
  | 'listThreads'
  | 'listExecutions'
> {
  return {
    readThread: (key) => readThreadWhere(pool, key),
    async hasMessageId(key, messageId) {
      const rows = await query(
        pool,
        `SELECT 1 FROM preview_chat_message_ids c JOIN preview_chat_threads t ON t.id = c.thread
         WHERE ${keyWhere('t.')} AND c.message_id = $5`,
        [...keyValues(key), messageId],
      )
      return rows.length > 0
    },
    async readExecution(executionId) {
      const [row] = await query(pool, `${executionSelect} WHERE e.id = $1`, [executionId])
      return row && executionOf(row)
    },
    countRunning: (ownerId) => countRunningOf(pool, ownerId),
    async listRunning(mainId) {
      const rows = await query(
        pool,
        `${executionSelect} WHERE e.main_id = $1 AND e.status = 'running' ORDER BY e.started_at`,
        [mainId],
      )
      return rows.map(executionOf)
    },
    async listThreads() {
      return (await query(pool, `${threadSelect} ORDER BY t.id`)).map(threadOf)
    },
    async listExecutions() {
      return (await query(pool, `${executionSelect} ORDER BY e.started_at, e.id`)).map(executionOf)
    },
  }
}
