/**
 * Instances' leases, and the end of a dead instance's turns: "each instance holds a lease on the
 * executions it runs and renews it; when an instance is killed, another ends its executions". A
 * lease's expiry is written and compared by the database's clock (`now()`), never by a main's, so
 * no instance's clock is ever compared with a time another instance wrote.
 */
import type { Pool } from 'pg'
import type { ExecutionRecord, PreviewChatStore } from '../store/types'
import { query, transaction } from './db'
import { bigintText, parseRow, text } from './rows'
import { lockThreadByKey } from './threads'
import { endRunning } from './turns'

// A running execution whose main holds no lease that is still live by the database's clock.
const orphaned = `e.status = 'running' AND NOT EXISTS (
  SELECT 1 FROM preview_chat_instances i
  WHERE i.main_id = e.main_id AND i.lease_expires_at > now())`

// Leases expired this long ago, whose mains run nothing, are forgotten.
const forgetAfter = "interval '1 day'"

export function leaseOperations(pool: Pool): Pick<PreviewChatStore, 'renewLease' | 'endOrphaned'> {
  return {
    async renewLease(mainId, ttlMs) {
      await query(
        pool,
        `INSERT INTO preview_chat_instances (main_id, lease_expires_at)
         VALUES ($1, now() + $2 * interval '1 millisecond')
         ON CONFLICT (main_id) DO UPDATE SET lease_expires_at = excluded.lease_expires_at`,
        [mainId, Math.max(0, Math.round(ttlMs))],
      )
    },

    // One transaction: the orphans' threads locked in one order (two sweeping instances never
    // wait on each other), each execution locked and checked again, then ended as
    // `endExecution` ends one, at the database's time.
    endOrphaned: ({ error, errorCode }) =>
      transaction(pool, async (client) => {
        const candidates = (
          await query(
            client,
            `SELECT e.id, e.thread FROM preview_chat_executions e WHERE ${orphaned}
             ORDER BY e.thread, e.id`,
          )
        ).map((row) => parseRow(row, { id: text, thread: bigintText }, 'preview_chat_executions'))
        await query(
          client,
          `DELETE FROM preview_chat_instances i WHERE i.lease_expires_at < now() - ${forgetAfter}
           AND NOT EXISTS (SELECT 1 FROM preview_chat_executions e
             WHERE e.main_id = i.main_id AND e.status = 'running')`,
        )
        if (candidates.length === 0) return []
        for (const thread of new Set(candidates.map((each) => each.thread))) {
          await lockThreadByKey(client, thread)
        }
        const [clock] = await query(
          client,
          `SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now`,
        )
        const endedAt = parseRow(clock ?? {}, { now: text }, 'now()').now
        const ended: ExecutionRecord[] = []
        for (const { id, thread } of candidates) {
          const still = await query(
            client,
            `SELECT 1 FROM preview_chat_executions e WHERE e.id = $1 AND ${orphaned} FOR UPDATE`,
            [id],
          )
          if (still.length === 0) continue
          const end = { executionId: id, status: 'error' as const, error, errorCode, endedAt }
          ended.push(await endRunning(client, thread, { ...end, messages: [] }))
        }
        return ended
      }),
  }
}
