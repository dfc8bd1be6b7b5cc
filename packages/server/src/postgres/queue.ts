/** The server's queue of a thread (the next-era flavor): its items, changed under the thread's lock. */
import type { Pool, PoolClient } from 'pg'
import type {
  PreviewChatStore,
  QueueChange,
  QueueChangeResult,
  QueueItemRecord,
  ThreadKey,
} from '../store/types'
import { query, Rollback, transaction } from './db'
import { queueItemOf, queueSelect } from './records'
import { parseRow, text } from './rows'
import {
  claim,
  isClaimed,
  keyValues,
  keyWhere,
  lockThread,
  recordExecution,
  type LockedThread,
} from './threads'

/** The thread's items in queue order. */
async function itemsOf(db: Pool | PoolClient, threadKey: string): Promise<QueueItemRecord[]> {
  const rows = await query(db, `${queueSelect} WHERE q.thread = $1 ORDER BY q.position`, [
    threadKey,
  ])
  return rows.map(queueItemOf)
}

/** Sets each of `ids`'s position to its index: the queue's new order. */
async function renumber(client: PoolClient, threadKey: string, ids: readonly string[]) {
  await query(
    client,
    `UPDATE preview_chat_queue_items q SET position = x.ord
     FROM unnest($2::bigint[]) WITH ORDINALITY AS x (id, ord)
     WHERE q.thread = $1 AND q.id = x.id`,
    [threadKey, ids],
  )
}

/** Whether `executionId` is the thread's active execution, running a message's turn. */
async function steerable(client: PoolClient, thread: LockedThread, executionId: string) {
  if (thread.activeExecutionId !== executionId) return false
  const [row] = await query(
    client,
    'SELECT status, kind FROM preview_chat_executions WHERE id = $1',
    [executionId],
  )
  if (!row) return false
  const execution = parseRow(row, { status: text, kind: text }, 'preview_chat_executions')
  return execution.status === 'running' && execution.kind === 'message'
}

/** One change to a pending item, under the thread's lock (the memory store's decisions, in order). */
async function changeQueued(
  client: PoolClient,
  key: ThreadKey,
  queueId: string,
  change: QueueChange,
): Promise<QueueChangeResult> {
  const thread = await lockThread(client, key)
  const queue = thread ? await itemsOf(client, thread.key) : []
  const item = queue.find((each) => each.id === queueId)
  if (!thread || !item || item.state === 'removed') return { ok: false, reason: 'not_found' }
  const pendingOrder = queue.filter((each) => each.state === 'pending').map((each) => each.id)
  // A reorder names the order it saw; a stale one is refused before anything else.
  if (change.kind === 'reorder' && pendingOrder.join() !== change.expectedQueueIds.join()) {
    return { ok: false, reason: 'queue_changed' }
  }
  if (item.state === 'steering') return { ok: false, reason: 'steering' }
  if (item.state !== 'pending') return { ok: false, reason: 'started' }
  const set = (assignments: string, values: unknown[]) =>
    query(client, `UPDATE preview_chat_queue_items SET ${assignments} WHERE id = $1`, [
      item.id,
      ...values,
    ])
  switch (change.kind) {
    case 'edit':
      await set('message = $2', [change.message])
      return { ok: true, item: { ...item, message: change.message } }
    case 'remove':
      await set("state = 'removed'", [])
      return { ok: true, item: { ...item, state: 'removed' } }
    case 'steer':
      if (!(await steerable(client, thread, change.executionId))) {
        return { ok: false, reason: 'not_steerable' }
      }
      await set("state = 'steering', steering_execution_id = $2", [change.executionId])
      return {
        ok: true,
        item: { ...item, state: 'steering', steeringExecutionId: change.executionId },
      }
    case 'reorder': {
      const to = pendingOrder.indexOf(change.targetQueueId)
      if (to === -1) return { ok: false, reason: 'target_not_queued' }
      const moved = pendingOrder.filter((id) => id !== item.id)
      moved.splice(to, 0, item.id)
      // The items out of the queue first, in their order, then the pending ones in the new order.
      const others = queue.filter((each) => each.state !== 'pending').map((each) => each.id)
      await renumber(client, thread.key, [...others, ...moved])
      return { ok: true, item }
    }
  }
}

export function queueOperations(
  pool: Pool,
): Pick<
  PreviewChatStore,
  'readQueue' | 'enqueue' | 'changeQueued' | 'takeUpNext' | 'takeSteers' | 'releaseSteers'
> {
  const byKey = `${queueSelect} JOIN preview_chat_threads t ON t.id = q.thread WHERE ${keyWhere('t.')}`
  return {
    async readQueue(key) {
      return (await query(pool, `${byKey} ORDER BY q.position`, keyValues(key))).map(queueItemOf)
    },

    enqueue: ({ thread: key, create, message, messageId, createdAt }) =>
      transaction(pool, async (client) => {
        const thread = await lockThread(client, key, create ? createdAt : undefined)
        if (!thread) return { ok: false, reason: 'thread_not_found' }
        if (messageId !== undefined && (await isClaimed(client, thread.key, messageId))) {
          throw new Rollback({ ok: false, reason: 'duplicate_message' } as const)
        }
        if (messageId !== undefined) await claim(client, thread.key, messageId)
        const [row] = await query(
          client,
          `INSERT INTO preview_chat_queue_items AS q
             (thread, position, message, client_message_id, created_at, state)
           SELECT $1, coalesce(max(position), 0) + 1, $2, $3, $4, 'pending'
           FROM preview_chat_queue_items WHERE thread = $1
           RETURNING q.id, q.message, q.client_message_id, q.created_at, q.state,
             q.steering_execution_id, q.execution_id`,
          [thread.key, message, messageId ?? null, createdAt],
        )
        return { ok: true, item: queueItemOf(row ?? {}) }
      }),

    changeQueued: (key, queueId, change) =>
      transaction(pool, (client) => changeQueued(client, key, queueId, change)),

    // "Taking up the next item waits for a running execution, an open approval checkpoint".
    takeUpNext: (key, draft) =>
      transaction(pool, async (client) => {
        const thread = await lockThread(client, key)
        if (!thread || thread.activeExecutionId !== null) return undefined
        const open = await query(
          client,
          "SELECT 1 FROM preview_chat_runs WHERE thread = $1 AND state = 'open' LIMIT 1",
          [thread.key],
        )
        const item = (await itemsOf(client, thread.key)).find((each) => each.state === 'pending')
        if (open.length > 0 || !item) return undefined
        await query(
          client,
          "UPDATE preview_chat_queue_items SET state = 'started', execution_id = $2 WHERE id = $1",
          [item.id, draft.id],
        )
        const admitted = await recordExecution(client, thread, draft)
        return { ...admitted, item: { ...item, state: 'started', executionId: draft.id } }
      }),

    async takeSteers(key, executionId) {
      const rows = await query(
        pool,
        `WITH taken AS (
           UPDATE preview_chat_queue_items q SET state = 'steered', execution_id = $5
           FROM preview_chat_threads t
           WHERE t.id = q.thread AND ${keyWhere('t.')}
             AND q.state = 'steering' AND q.steering_execution_id = $5
           RETURNING q.*)
         ${queueSelect.replace('preview_chat_queue_items q', 'taken q')} ORDER BY q.position`,
        [...keyValues(key), executionId],
      )
      return rows.map(queueItemOf)
    },

    async releaseSteers(key, executionId) {
      const rows = await query(
        pool,
        `UPDATE preview_chat_queue_items q SET state = 'pending', steering_execution_id = NULL
         FROM preview_chat_threads t
         WHERE t.id = q.thread AND ${keyWhere('t.')}
           AND q.state = 'steering' AND q.steering_execution_id = $5
         RETURNING q.id`,
        [...keyValues(key), executionId],
      )
      return rows.length
    },
  }
}
