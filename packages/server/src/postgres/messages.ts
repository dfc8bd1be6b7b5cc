/** The recorded timeline's writes: a batch of messages, and a closed suspension's tool call. */
import type { Message } from '@preview-chat/core/contract'
import type { PoolClient } from 'pg'
import { jsonParam, query } from './db'
import { malformed } from './rows'

/**
 * Records `messages` in the thread: each replaces the thread's message of its id (keeping its
 * place) or joins the end, in the batch's order. One statement, whatever the batch's size.
 */
export async function upsertMessages(
  client: PoolClient,
  threadKey: string,
  messages: readonly Message[],
): Promise<void> {
  if (messages.length === 0) return
  // One row per id (a statement may not update a row twice): the last recording of an id, at the
  // place of its first.
  const byId = new Map<string, Message>()
  for (const message of messages) byId.set(message.id, message)
  await query(
    client,
    `INSERT INTO preview_chat_messages AS m (thread, id, execution_id, role, execution_status,
       execution_error, created_at, client_message_id, content)
     SELECT $1, x.value->>'id', x.value->>'executionId', x.value->>'role',
       x.value->>'executionStatus', x.value->>'executionError', x.value->>'createdAt',
       x.value->>'messageId', x.value->'content'
     FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS x (value, ord)
     ORDER BY x.ord
     ON CONFLICT (thread, id) DO UPDATE SET execution_id = excluded.execution_id,
       role = excluded.role, execution_status = excluded.execution_status,
       execution_error = excluded.execution_error, created_at = excluded.created_at,
       client_message_id = excluded.client_message_id, content = excluded.content`,
    [threadKey, jsonParam([...byId.values()])],
  )
}

/**
 * A suspension resumed or cancelled is no longer waiting in its tool call: the part loses
 * `suspendPayload`, and with a `rejection` (cancelled) it is `rejected` with that error.
 */
export async function closeSuspension(
  client: PoolClient,
  threadKey: string,
  toolCallId: string,
  rejection?: string,
): Promise<void> {
  // The messages holding that tool call (jsonb containment), locked for the rewrite.
  const rows = await query(
    client,
    `SELECT position, content FROM preview_chat_messages
     WHERE thread = $1 AND content @> $2::jsonb FOR UPDATE`,
    [threadKey, jsonParam([{ type: 'tool-call', toolCallId }])],
  )
  for (const row of rows) {
    if (!Array.isArray(row.content)) throw malformed('preview_chat_messages', 'column content')
    const content = row.content.map((part: unknown) => {
      if (typeof part !== 'object' || part === null) return part
      const toolCall = part as Record<string, unknown>
      if (toolCall.type !== 'tool-call' || toolCall.toolCallId !== toolCallId) return part
      const { suspendPayload: _closed, ...rest } = toolCall
      return rejection === undefined ? rest : { ...rest, state: 'rejected', error: rejection }
    })
    await query(
      client,
      'UPDATE preview_chat_messages SET content = $3::jsonb WHERE thread = $1 AND position = $2',
      [threadKey, row.position, jsonParam(content)],
    )
  }
}
