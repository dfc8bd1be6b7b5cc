/** Suspended runs: read, resumed once, or cancelled. */
import type { Pool, PoolClient } from 'pg'
import type { PreviewChatStore, RunRecord, ThreadScope } from '../store/types'
import { query, transaction } from './db'
import { closeSuspension } from './messages'
import { runOf, runSelect } from './records'
import { bigintText, parseRow } from './rows'
import { lockOwner, lockThreadByKey, recordExecution, refusal, type LockedThread } from './threads'

const scopeWhere = 'r.run_id = $1 AND t.owner_id = $2 AND t.project_id = $3 AND t.agent_id = $4'
const scopeValues = (runId: string, scope: ThreadScope) => [
  runId,
  scope.ownerId,
  scope.projectId,
  scope.agentId,
]

/**
 * The run of that id, if it is of `scope`, with its thread's row locked and then its own (the
 * order every operation locks in); undefined for another scope's run, as for an unknown one.
 */
async function lockRun(
  client: PoolClient,
  runId: string,
  scope: ThreadScope,
): Promise<{ run: RunRecord; thread: LockedThread } | undefined> {
  const [found] = await query(
    client,
    `SELECT r.thread FROM preview_chat_runs r JOIN preview_chat_threads t ON t.id = r.thread
     WHERE ${scopeWhere}`,
    scopeValues(runId, scope),
  )
  if (!found) return undefined
  const { thread: threadKey } = parseRow(found, { thread: bigintText }, 'preview_chat_runs')
  const thread = await lockThreadByKey(client, threadKey)
  const [row] = await query(client, `${runSelect} WHERE ${scopeWhere} FOR UPDATE OF r`, [
    ...scopeValues(runId, scope),
  ])
  return thread && row ? { run: runOf(row), thread } : undefined
}

export function runOperations(
  pool: Pool,
): Pick<PreviewChatStore, 'readRun' | 'resumeRun' | 'cancelRun'> {
  return {
    async readRun(runId, scope) {
      const [row] = await query(pool, `${runSelect} WHERE ${scopeWhere}`, scopeValues(runId, scope))
      return row && runOf(row)
    },

    resumeRun: (resumption) =>
      transaction(pool, async (client) => {
        const { scope } = resumption
        if (resumption.maxRunningPerOwner !== undefined) await lockOwner(client, scope.ownerId)
        const locked = await lockRun(client, resumption.runId, scope)
        if (!locked || locked.run.payload.toolCallId !== resumption.toolCallId) {
          return { ok: false, reason: 'run_not_found' }
        }
        const { run, thread } = locked
        if (run.state !== 'open') return { ok: false, reason: 'run_closed', state: run.state }
        const refused = await refusal(client, thread, resumption)
        if (refused) return { ok: false, reason: refused }
        await query(client, "UPDATE preview_chat_runs SET state = 'resumed' WHERE run_id = $1", [
          run.runId,
        ])
        await closeSuspension(client, thread.key, run.payload.toolCallId)
        return recordExecution(client, thread, resumption.execution)
      }),

    cancelRun: (runId, scope, rejection) =>
      transaction(pool, async (client) => {
        const locked = await lockRun(client, runId, scope)
        if (!locked || locked.run.state !== 'open') return { run: locked?.run, cancelled: false }
        const { run, thread } = locked
        await query(client, "UPDATE preview_chat_runs SET state = 'cancelled' WHERE run_id = $1", [
          runId,
        ])
        await closeSuspension(client, thread.key, run.payload.toolCallId, rejection)
        return { run: { ...run, state: 'cancelled' }, cancelled: true }
      }),
  }
}
