import type { ExecutionStatus, HistorySnapshot, Message } from '@preview-chat/core/contract'
import * as v from 'valibot'
import { isRecord, unwrapEnvelope, validate, type ParseResult } from './result'

const timestamp = v.union([v.number(), v.string()])

const textPart = v.object({ type: v.literal('text'), text: v.string() })
const reasoningPart = v.object({
  type: v.literal('reasoning'),
  text: v.string(),
  startTime: v.optional(timestamp),
  endTime: v.optional(timestamp),
})
const childTrace = v.object({
  text: v.string(),
  reasoningSegments: v.array(
    v.object({
      id: v.string(),
      content: v.string(),
      startTime: v.optional(timestamp),
      endTime: v.optional(timestamp),
    }),
  ),
  steps: v.array(v.object({ toolCallId: v.string(), toolName: v.string(), running: v.boolean() })),
})
const toolCallPart = v.object({
  type: v.literal('tool-call'),
  toolName: v.string(),
  toolCallId: v.string(),
  input: v.optional(v.unknown()),
  state: v.optional(v.picklist(['resolved', 'rejected'])),
  output: v.optional(v.unknown()),
  error: v.optional(v.string()),
  startTime: v.optional(timestamp),
  endTime: v.optional(timestamp),
  suspendPayload: v.optional(v.unknown()),
  childTrace: v.optional(childTrace),
})
const filePart = v.object({
  type: v.literal('file'),
  fileId: v.string(),
  fileName: v.string(),
  mimeType: v.string(),
  sizeBytes: v.number(),
})

const partTypes: ReadonlySet<unknown> = new Set(['text', 'reasoning', 'tool-call', 'file'])

// Forward compatibility: a part type this client does not know yet is dropped, not fatal.
const isKnownPart = (part: unknown) => !isRecord(part) || partTypes.has(part.type)

const messageSchema = v.object({
  id: v.string(),
  role: v.picklist(['user', 'assistant']),
  content: v.pipe(
    v.array(v.unknown()),
    v.filterItems(isKnownPart),
    v.array(v.variant('type', [textPart, reasoningPart, toolCallPart, filePart])),
  ),
  executionId: v.string(),
  // Optional on the wire: the released n8n 2.41 sends none on user messages (derived below).
  executionStatus: v.optional(
    v.picklist(['running', 'success', 'error', 'cancelled', 'interrupted']),
  ),
  executionError: v.optional(v.string()),
  createdAt: v.string(),
})

const suspensionSchema = v.object({
  toolCallId: v.string(),
  runId: v.string(),
  suspendPayload: v.optional(v.unknown()),
})

const snapshotSchema = v.object({
  messages: v.array(messageSchema),
  openSuspensions: v.array(suspensionSchema),
  // Optional on the wire: the released n8n 2.41 does not send it (derived below).
  activeExecutionId: v.optional(v.nullable(v.string())),
})

type WireSnapshot = v.InferOutput<typeof snapshotSchema>

/** Turns the JSON body of a history read (wrapped in `{ data }` or bare) into a snapshot. */
export function parseHistorySnapshot(body: unknown): ParseResult<HistorySnapshot> {
  const result = validate(snapshotSchema, unwrapEnvelope(body), 'The history snapshot')
  return result.success ? { success: true, value: completeSnapshot(result.value) } : result
}

/**
 * Fills in what an older server leaves out. A message's status is its execution's: the assistant
 * message's, or `running` while the execution has no assistant message yet (n8n 2.41 writes it
 * with the first output). The active execution is the last one whose assistant message is absent
 * or running. A snapshot the server completed itself is returned as it is.
 */
function completeSnapshot(wire: WireSnapshot): HistorySnapshot {
  const complete =
    wire.activeExecutionId !== undefined &&
    wire.messages.every((message) => message.executionStatus !== undefined)
  if (complete) return wire as HistorySnapshot
  const statusOf = new Map<string, ExecutionStatus>()
  for (const message of wire.messages)
    if (message.role === 'assistant' && message.executionStatus)
      statusOf.set(message.executionId, message.executionStatus)
  const messages = wire.messages.map((message): Message =>
    message.executionStatus
      ? (message as Message)
      : { ...message, executionStatus: statusOf.get(message.executionId) ?? 'running' },
  )
  const running = messages.filter((message) => message.executionStatus === 'running')
  const activeExecutionId =
    wire.activeExecutionId === undefined
      ? (running.at(-1)?.executionId ?? null)
      : wire.activeExecutionId
  return { messages, openSuspensions: wire.openSuspensions, activeExecutionId, derived: true }
}
