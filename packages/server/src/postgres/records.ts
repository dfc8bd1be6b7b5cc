/**
 * The store's records as SQL selects them and as they are parsed back: each read goes through one
 * of the `…Of(row)` parsers here, which give a typed record or throw `malformed_row`.
 */
import { parseHistorySnapshot, type SuspendedPayload } from '@preview-chat/core/contract'
import type { ExecutionRecord, QueueItemRecord, RunRecord, ThreadRecord } from '../store/types'
import { bigintText, json, malformed, nullable, oneOf, parseRow, text } from './rows'

const statuses = ['running', 'success', 'error', 'cancelled', 'interrupted'] as const

/** The scope columns of a row joined with its thread (`t`). */
const scopeSql = 't.thread_id, t.owner_id, t.project_id, t.agent_id'
const scopeColumns = { thread_id: text, owner_id: text, project_id: text, agent_id: text }

/** A thread with its timeline and open suspensions: one statement, one snapshot of them. */
export const threadSelect = `
  SELECT t.id AS key, ${scopeSql}, t.created_at, t.active_execution_id,
    coalesce((
      SELECT json_agg(
        jsonb_build_object('id', m.id, 'role', m.role, 'content', m.content,
          'executionId', m.execution_id, 'executionStatus', m.execution_status,
          'createdAt', m.created_at)
        || CASE WHEN m.execution_error IS NULL THEN '{}'::jsonb
             ELSE jsonb_build_object('executionError', m.execution_error) END
        || CASE WHEN m.client_message_id IS NULL THEN '{}'::jsonb
             ELSE jsonb_build_object('messageId', m.client_message_id) END
        ORDER BY m.position)
      FROM preview_chat_messages m WHERE m.thread = t.id), '[]') AS messages,
    coalesce((
      SELECT json_agg(r.payload ORDER BY r.position)
      FROM preview_chat_runs r WHERE r.thread = t.id AND r.state = 'open'), '[]') AS suspensions
  FROM preview_chat_threads t`

const threadColumns = {
  ...scopeColumns,
  created_at: text,
  active_execution_id: nullable(text),
  messages: json,
  suspensions: json,
}

/** A row of `threadSelect` as a `ThreadRecord`, its messages checked by the contract's parser. */
export function threadOf(row: Record<string, unknown>): ThreadRecord {
  const parsed = parseRow(row, threadColumns, 'preview_chat_threads')
  const payloads = Array.isArray(parsed.suspensions) ? parsed.suspensions : [null]
  const openSuspensions = payloads.map((payload) => {
    const checked = suspendedPayload(payload)
    if (!checked) throw malformed('preview_chat_runs', 'column payload')
    return { toolCallId: checked.toolCallId, runId: checked.runId, suspendPayload: checked }
  })
  // The contract's own parser of a history read: the messages as a client would check them.
  const snapshot = parseHistorySnapshot({
    messages: parsed.messages,
    openSuspensions,
    activeExecutionId: parsed.active_execution_id,
  })
  if (!snapshot.success) {
    const issues = snapshot.error.issues ?? []
    throw malformed('preview_chat_messages', issues.slice(0, 3).join('; ') || 'messages')
  }
  return {
    id: parsed.thread_id,
    projectId: parsed.project_id,
    agentId: parsed.agent_id,
    ownerId: parsed.owner_id,
    createdAt: parsed.created_at,
    messages: snapshot.value.messages,
    openSuspensions: snapshot.value.openSuspensions,
    activeExecutionId: parsed.active_execution_id,
  }
}

/** A `SuspendedPayload`, or undefined. */
export function suspendedPayload(value: unknown): SuspendedPayload | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const { toolCallId, runId, toolName, input } = value as Record<string, unknown>
  if (typeof toolCallId !== 'string' || typeof runId !== 'string' || typeof toolName !== 'string')
    return undefined
  return { toolCallId, runId, toolName, input }
}

/** An execution with its thread's scope (`e` joined with `t`). */
export const executionSelect = `
  SELECT e.id, ${scopeSql}, e.main_id, e.kind, e.status, e.error, e.error_code,
    e.started_at, e.ended_at
  FROM preview_chat_executions e JOIN preview_chat_threads t ON t.id = e.thread`

const executionColumns = {
  id: text,
  ...scopeColumns,
  main_id: text,
  kind: oneOf(['message', 'resume']),
  status: oneOf(statuses),
  error: nullable(text),
  error_code: nullable(text),
  started_at: text,
  ended_at: nullable(text),
}

export function executionOf(row: Record<string, unknown>): ExecutionRecord {
  const parsed = parseRow(row, executionColumns, 'preview_chat_executions')
  return {
    id: parsed.id,
    threadId: parsed.thread_id,
    projectId: parsed.project_id,
    agentId: parsed.agent_id,
    ownerId: parsed.owner_id,
    mainId: parsed.main_id,
    kind: parsed.kind,
    status: parsed.status,
    ...(parsed.error !== null && { error: parsed.error }),
    ...(parsed.error_code !== null && { errorCode: parsed.error_code }),
    startedAt: parsed.started_at,
    ...(parsed.ended_at !== null && { endedAt: parsed.ended_at }),
  }
}

/** A run with its thread's scope (`r` joined with `t`). */
export const runSelect = `
  SELECT r.run_id, ${scopeSql}, r.execution_id, r.payload, r.state
  FROM preview_chat_runs r JOIN preview_chat_threads t ON t.id = r.thread`

const runColumns = {
  run_id: text,
  ...scopeColumns,
  execution_id: text,
  payload: json,
  state: oneOf(['open', 'resumed', 'cancelled']),
}

export function runOf(row: Record<string, unknown>): RunRecord {
  const parsed = parseRow(row, runColumns, 'preview_chat_runs')
  const payload = suspendedPayload(parsed.payload)
  if (!payload || payload.runId !== parsed.run_id)
    throw malformed('preview_chat_runs', 'column payload')
  return {
    runId: parsed.run_id,
    threadId: parsed.thread_id,
    executionId: parsed.execution_id,
    projectId: parsed.project_id,
    agentId: parsed.agent_id,
    ownerId: parsed.owner_id,
    payload,
    state: parsed.state,
  }
}

/** A queue item (`q`), in queue order when ordered by `q.position`. */
export const queueSelect = `
  SELECT q.id, q.message, q.client_message_id, q.created_at, q.state, q.steering_execution_id,
    q.execution_id
  FROM preview_chat_queue_items q`

const queueColumns = {
  id: bigintText,
  message: text,
  client_message_id: nullable(text),
  created_at: text,
  state: oneOf(['pending', 'steering', 'started', 'steered', 'removed']),
  steering_execution_id: nullable(text),
  execution_id: nullable(text),
}

export function queueItemOf(row: Record<string, unknown>): QueueItemRecord {
  const parsed = parseRow(row, queueColumns, 'preview_chat_queue_items')
  return {
    id: parsed.id,
    message: parsed.message,
    ...(parsed.client_message_id !== null && { messageId: parsed.client_message_id }),
    createdAt: parsed.created_at,
    state: parsed.state,
    steeringExecutionId: parsed.steering_execution_id,
    ...(parsed.execution_id !== null && { executionId: parsed.execution_id }),
  }
}
