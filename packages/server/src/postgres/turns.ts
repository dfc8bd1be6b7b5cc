/** A turn's life in the record: admitted, its snapshots recorded, ended. */
import type { Pool, PoolClient } from 'pg'
import type { ExecutionEnd, ExecutionRecord, PreviewChatStore } from '../store/types'
import { jsonParam, query, Rollback, transaction } from './db'
import { upsertMessages } from './messages'
import { executionOf, executionSelect } from './records'
import { bigintText, parseRow, text } from './rows'
import {
  claim,
  isClaimed,
  lockOwner,
  lockThread,
  lockThreadByKey,
  recordExecution,
  refusal,
} from './threads'

/** The table key of an execution's thread and its status, locked if `lock` (`FOR UPDATE`). */
async function executionState(client: PoolClient, executionId: string, lock: string) {
  const [row] = await query(
    client,
    `SELECT thread, status FROM preview_chat_executions WHERE id = $1 ${lock}`,
    [executionId],
  )
  return row && parseRow(row, { thread: bigintText, status: text }, 'preview_chat_executions')
}

/**
 * Ends a running execution whose thread and execution rows this transaction locked: its status,
 * its messages and theirs, the suspension's run, the thread's active id if it is this execution.
 */
export async function endRunning(
  client: PoolClient,
  threadKey: string,
  end: ExecutionEnd,
): Promise<ExecutionRecord> {
  await query(
    client,
    `UPDATE preview_chat_executions SET status = $2, error = $3, error_code = $4, ended_at = $5
     WHERE id = $1`,
    [end.executionId, end.status, end.error ?? null, end.errorCode ?? null, end.endedAt],
  )
  await upsertMessages(client, threadKey, end.messages)
  await query(
    client,
    `UPDATE preview_chat_messages SET execution_status = $3,
       execution_error = coalesce($4, execution_error)
     WHERE thread = $1 AND execution_id = $2`,
    [threadKey, end.executionId, end.status, end.error ?? null],
  )
  if (end.suspension) {
    await query(
      client,
      `INSERT INTO preview_chat_runs (run_id, thread, execution_id, payload, state)
       VALUES ($1, $2, $3, $4::jsonb, 'open')`,
      [end.suspension.runId, threadKey, end.executionId, jsonParam(end.suspension)],
    )
  }
  await query(
    client,
    `UPDATE preview_chat_threads SET active_execution_id = NULL
     WHERE id = $1 AND active_execution_id = $2`,
    [threadKey, end.executionId],
  )
  const [row] = await query(client, `${executionSelect} WHERE e.id = $1`, [end.executionId])
  return executionOf(row ?? {})
}

export function turnOperations(
  pool: Pool,
): Pick<PreviewChatStore, 'admitTurn' | 'recordMessages' | 'endExecution'> {
  return {
    // One transaction: the owner (when limited), then the thread's row, locked; every check and
    // write under those locks, so that of two instances admitting at once one waits for the other
    // and then sees its turn. A refusal rolls back (a thread created for it is not kept).
    admitTurn: (admission) =>
      transaction(pool, async (client) => {
        const { thread: key, messageId } = admission
        if (admission.maxRunningPerOwner !== undefined) await lockOwner(client, key.ownerId)
        const createdAt = admission.create ? admission.execution.startedAt : undefined
        const thread = await lockThread(client, key, createdAt)
        if (!thread) return { ok: false, reason: 'thread_not_found' }
        if (messageId !== undefined && (await isClaimed(client, thread.key, messageId))) {
          throw new Rollback({ ok: false, reason: 'duplicate_message' } as const)
        }
        const refused = await refusal(client, thread, admission)
        if (refused) throw new Rollback({ ok: false, reason: refused } as const)
        if (messageId !== undefined) await claim(client, thread.key, messageId)
        return recordExecution(client, thread, admission.execution)
      }),

    // The execution's row shared-locked: an end (which locks it for update) waits for this batch,
    // and a batch after the end finds it ended and writes nothing.
    recordMessages: (executionId, messages) =>
      transaction(pool, async (client) => {
        const execution = await executionState(client, executionId, 'FOR SHARE')
        if (execution?.status !== 'running') return
        await upsertMessages(client, execution.thread, messages)
      }),

    endExecution: (end) =>
      transaction(pool, async (client) => {
        const found = await executionState(client, end.executionId, '')
        if (!found) return undefined
        // The thread first, then the execution: every operation locks in that order.
        const thread = await lockThreadByKey(client, found.thread)
        const execution = await executionState(client, end.executionId, 'FOR UPDATE')
        if (!thread || execution?.status !== 'running') return undefined
        return endRunning(client, thread.key, end)
      }),
  }
}
