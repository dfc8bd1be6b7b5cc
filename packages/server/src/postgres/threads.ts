/**
 * What every operation on a thread starts with, inside its transaction: the thread's row found
 * (or created) and locked, so that the operations on one thread run one after the other on every
 * instance; and the admission of a new execution.
 */
import type { PoolClient } from 'pg'
import type { Admitted, ExecutionDraft, ThreadKey, ThreadRecord } from '../store/types'
import { query, type Queryable } from './db'
import { executionOf, executionSelect, threadOf, threadSelect } from './records'
import { bigintText, int, nullable, parseRow, text } from './rows'

/** A thread's row, locked for the rest of the transaction. */
export interface LockedThread {
  /** Its key in the tables (`preview_chat_threads.id`). */
  key: string
  ownerId: string
  activeExecutionId: string | null
}

const lockedColumns = { id: bigintText, owner_id: text, active_execution_id: nullable(text) }

/** The condition on a thread's key (`$1`-`$4`: `keyValues`), its columns prefixed with `table`. */
export const keyWhere = (table = '') =>
  `${table}owner_id = $1 AND ${table}project_id = $2 AND ${table}agent_id = $3 AND ${table}thread_id = $4`
export const keyValues = (key: ThreadKey) => [key.ownerId, key.projectId, key.agentId, key.threadId]

/**
 * Locks the thread of `key` (`FOR UPDATE`); when it has none and `createdAt` is given, creates it
 * first. Of two instances creating one thread at once, the second waits for the first's
 * transaction and then finds its thread (or, if it rolled back, creates it).
 */
export async function lockThread(
  client: PoolClient,
  key: ThreadKey,
  createdAt?: string,
): Promise<LockedThread | undefined> {
  if (createdAt !== undefined) {
    await query(
      client,
      `INSERT INTO preview_chat_threads (owner_id, project_id, agent_id, thread_id, created_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [...keyValues(key), createdAt],
    )
  }
  const rows = await query(
    client,
    `SELECT id, owner_id, active_execution_id FROM preview_chat_threads WHERE ${keyWhere()}
     FOR UPDATE`,
    keyValues(key),
  )
  return rows[0] && lockedOf(rows[0])
}

/** Locks the thread whose table key is `threadKey` (see `lockThread`). */
export async function lockThreadByKey(
  client: PoolClient,
  threadKey: string,
): Promise<LockedThread | undefined> {
  const rows = await query(
    client,
    'SELECT id, owner_id, active_execution_id FROM preview_chat_threads WHERE id = $1 FOR UPDATE',
    [threadKey],
  )
  return rows[0] && lockedOf(rows[0])
}

function lockedOf(row: Record<string, unknown>): LockedThread {
  const parsed = parseRow(row, lockedColumns, 'preview_chat_threads')
  return { key: parsed.id, ownerId: parsed.owner_id, activeExecutionId: parsed.active_execution_id }
}

/** The thread of `key` (its messages and open suspensions with it), or undefined. */
export async function readThreadWhere(
  client: Queryable,
  key: ThreadKey,
): Promise<ThreadRecord | undefined> {
  const rows = await query(client, `${threadSelect} WHERE ${keyWhere('t.')}`, keyValues(key))
  return rows[0] && threadOf(rows[0])
}

/** Whether the thread accepted the client `messageId` before. */
export async function isClaimed(client: PoolClient, threadKey: string, messageId: string) {
  const rows = await query(
    client,
    'SELECT 1 FROM preview_chat_message_ids WHERE thread = $1 AND message_id = $2',
    [threadKey, messageId],
  )
  return rows.length > 0
}

/** Records that the thread accepted the client `messageId`. */
export async function claim(client: PoolClient, threadKey: string, messageId: string) {
  await query(client, 'INSERT INTO preview_chat_message_ids (thread, message_id) VALUES ($1, $2)', [
    threadKey,
    messageId,
  ])
}

// `pg_advisory_xact_lock(namespace, hashtext(owner))`: one owner's admissions one after the other.
const ownerLockSpace = 730_472_611

/**
 * Why a new execution of `thread` may not start now, if it may not. Where the owner's running
 * executions are limited, their admissions are serialized by an advisory lock on the owner
 * (taken before the thread's row, in every operation, so that no two wait on each other).
 */
export async function refusal(
  client: PoolClient,
  thread: LockedThread,
  options: { exclusive: boolean; maxRunningPerOwner?: number | undefined },
): Promise<'turn_already_running' | 'too_many_turns' | undefined> {
  if (options.exclusive && thread.activeExecutionId !== null) return 'turn_already_running'
  if (options.maxRunningPerOwner === undefined) return undefined
  const running = await countRunningOf(client, thread.ownerId)
  return running >= options.maxRunningPerOwner ? 'too_many_turns' : undefined
}

/** How many executions of `ownerId` run now, on every instance. */
export async function countRunningOf(db: Queryable, ownerId: string): Promise<number> {
  const [row] = await query(
    db,
    `SELECT count(*)::int AS running FROM preview_chat_executions e
     JOIN preview_chat_threads t ON t.id = e.thread
     WHERE t.owner_id = $1 AND e.status = 'running'`,
    [ownerId],
  )
  return parseRow(row ?? {}, { running: int }, 'preview_chat_executions').running
}

/** Serializes the admissions of `ownerId`'s turns where their number is limited (see `refusal`). */
export async function lockOwner(client: PoolClient, ownerId: string): Promise<void> {
  await query(client, 'SELECT pg_advisory_xact_lock($1, hashtext($2))', [ownerLockSpace, ownerId])
}

/**
 * Records a running execution of `thread` and makes it the thread's active one; answers the thread
 * as it was before (the agent's history) and the execution.
 */
export async function recordExecution(
  client: PoolClient,
  thread: LockedThread,
  draft: ExecutionDraft,
): Promise<Admitted> {
  const before = await readThreadByKey(client, thread.key)
  await query(
    client,
    `INSERT INTO preview_chat_executions (id, thread, kind, status, main_id, started_at)
     VALUES ($1, $2, $3, 'running', $4, $5)`,
    [draft.id, thread.key, draft.kind, draft.mainId, draft.startedAt],
  )
  await query(client, 'UPDATE preview_chat_threads SET active_execution_id = $2 WHERE id = $1', [
    thread.key,
    draft.id,
  ])
  const [row] = await query(client, `${executionSelect} WHERE e.id = $1`, [draft.id])
  return { ok: true, thread: before, execution: executionOf(row ?? {}) }
}

async function readThreadByKey(client: PoolClient, threadKey: string): Promise<ThreadRecord> {
  const [row] = await query(client, `${threadSelect} WHERE t.id = $1`, [threadKey])
  return threadOf(row ?? {})
}
