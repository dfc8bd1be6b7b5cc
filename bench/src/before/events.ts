import type { SubagentChunk, TurnEvent, TurnEventType } from '@preview-chat/core/contract'
import * as v from 'valibot'
import { PreviewChatError } from '@preview-chat/core'
import { isRecord, parseJson, validate } from './result'

const str = v.string()
const timestamp = v.union([v.number(), v.string()])
const toolStart = { toolCallId: str, toolName: str }
const executionStart = { ...toolStart, startTime: timestamp }
const executionEnd = { ...toolStart, isError: v.boolean(), endTime: timestamp }

const chunkSchemas = {
  'text-delta': v.object({ type: v.literal('text-delta'), delta: str }),
  'reasoning-start': v.object({ type: v.literal('reasoning-start') }),
  'reasoning-delta': v.object({ type: v.literal('reasoning-delta'), delta: str }),
  'reasoning-end': v.object({ type: v.literal('reasoning-end') }),
  'tool-input-start': v.object({ type: v.literal('tool-input-start'), ...toolStart }),
  'tool-execution-start': v.object({ type: v.literal('tool-execution-start'), ...executionStart }),
  'tool-execution-end': v.object({ type: v.literal('tool-execution-end'), ...executionEnd }),
} satisfies {
  [K in SubagentChunk['type']]: v.GenericSchema<unknown, Extract<SubagentChunk, { type: K }>>
}

const eventSchemas = {
  'execution-started': v.object({
    type: v.literal('execution-started'),
    executionId: str,
    sessionId: str,
  }),
  'start-step': v.object({ type: v.literal('start-step') }),
  'finish-step': v.object({ type: v.literal('finish-step') }),
  'text-start': v.object({ type: v.literal('text-start'), id: str }),
  'text-end': v.object({ type: v.literal('text-end'), id: str }),
  'text-delta': v.object({ type: v.literal('text-delta'), id: str, delta: str }),
  'reasoning-start': v.object({ type: v.literal('reasoning-start'), id: str }),
  'reasoning-end': v.object({ type: v.literal('reasoning-end'), id: str }),
  'reasoning-delta': v.object({ type: v.literal('reasoning-delta'), id: str, delta: str }),
  'tool-input-start': v.object({ type: v.literal('tool-input-start'), ...toolStart }),
  'tool-input-delta': v.object({
    type: v.literal('tool-input-delta'),
    toolCallId: str,
    delta: str,
  }),
  'tool-call': v.object({ type: v.literal('tool-call'), ...toolStart, input: v.unknown() }),
  'tool-execution-start': v.object({ type: v.literal('tool-execution-start'), ...executionStart }),
  'tool-execution-end': v.object({ type: v.literal('tool-execution-end'), ...executionEnd }),
  'tool-result': v.object({
    type: v.literal('tool-result'),
    ...toolStart,
    output: v.unknown(),
    isError: v.optional(v.boolean()),
    canceled: v.optional(v.boolean()),
  }),
  'tool-call-suspended': v.object({
    type: v.literal('tool-call-suspended'),
    payload: v.object({ ...toolStart, runId: str, input: v.unknown() }),
  }),
  'subagent-chunk': v.object({
    type: v.literal('subagent-chunk'),
    parentToolCallId: str,
    taskPath: str,
    chunk: v.variant('type', Object.values(chunkSchemas)),
  }),
  'message-queued': v.object({ type: v.literal('message-queued'), queueId: str, sessionId: str }),
  warning: v.object({ type: v.literal('warning'), message: str, code: v.optional(str) }),
  error: v.object({ type: v.literal('error'), message: str, errorCode: v.optional(str) }),
  done: v.object({
    type: v.literal('done'),
    sessionId: v.optional(str),
    executionId: v.optional(str),
  }),
} satisfies { [K in TurnEventType]: v.GenericSchema<unknown, Extract<TurnEvent, { type: K }>> }

const hasOwn = <T extends object>(record: T, key: unknown): key is keyof T =>
  typeof key === 'string' && Object.prototype.hasOwnProperty.call(record, key)

/** The outcome of reading one `data:` block of a turn stream. */
type TurnEventParseResult =
  | { kind: 'event'; event: TurnEvent }
  /** A type (or child chunk type) this client does not know: tolerated for forward compatibility. */
  | { kind: 'ignored'; type: string }
  | { kind: 'invalid'; error: PreviewChatError }

/** Turns the text of one SSE `data:` block into a typed turn event. Never throws. */
export function parseTurnEvent(data: string): TurnEventParseResult {
  const json = parseJson(data, 'A turn stream event')
  if (!json.success) return { kind: 'invalid', error: json.error }
  const raw = json.value
  if (!isRecord(raw) || typeof raw.type !== 'string') {
    return {
      kind: 'invalid',
      error: new PreviewChatError(
        'invalid_response',
        'A turn stream event has no string "type". Check that the URL points at the agents v2 chat endpoint.',
      ),
    }
  }
  const type = raw.type
  // The hot path: a turn is mostly deltas. This check is the whole of their schema.
  if (
    (type === 'text-delta' || type === 'reasoning-delta') &&
    typeof raw.id === 'string' &&
    typeof raw.delta === 'string'
  ) {
    return { kind: 'event', event: { type, id: raw.id, delta: raw.delta } }
  }
  if (!hasOwn(eventSchemas, type)) return { kind: 'ignored', type }
  if (type === 'subagent-chunk' && isRecord(raw.chunk) && !hasOwn(chunkSchemas, raw.chunk.type)) {
    return { kind: 'ignored', type: `subagent-chunk/${String(raw.chunk.type)}` }
  }
  const schema: v.GenericSchema<unknown, TurnEvent> = eventSchemas[type]
  const result = validate(schema, raw, `A "${type}" turn stream event`)
  return result.success
    ? { kind: 'event', event: result.value }
    : { kind: 'invalid', error: result.error }
}
