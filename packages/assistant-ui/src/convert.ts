/**
 * preview-chat's recorded messages as assistant-ui's `ThreadMessageLike` (its external store's
 * `convertMessage`). Pure: the same message gives an equal result, and assistant-ui caches the
 * result per message object, which keeps its identity from one read to the next while unchanged.
 *
 * - text → `text`; reasoning → `reasoning`; file → `file` (`data` is the file id, `sourceType:
 *   'id'`; the size in `providerMetadata.previewChat.sizeBytes`).
 * - tool-call → `tool-call`: `args` = `input` (a non-object input as `{ input }`), `argsText` its
 *   JSON (`jsonText`, never throwing), `result` = `output` once `resolved`, the `error` (or
 *   output) with `isError` once `rejected`; a suspended call carries `interrupt: { type:
 *   'human', payload: suspendPayload }`.
 * - a delegation's `childTrace` → the tool call's `messages`: one assistant message of the child
 *   (its reasoning, its steps as tool calls, its text), `incomplete`/`length` when truncated.
 * - the message's status from its execution (see `messageStatus`).
 */
import type { MessageStatus, ThreadAssistantMessage, ThreadMessageLike } from '@assistant-ui/react'
import type { ChildTrace, Message, MessagePart, ToolCallPart } from '@preview-chat/react'

type LikePart = Exclude<ThreadMessageLike['content'], string>[number]
type LikeToolCall = Extract<LikePart, { type: 'tool-call' }>
type JsonObject = NonNullable<LikeToolCall['args']>
type JsonValue = JsonObject[string]

const running: MessageStatus = { type: 'running' }
const complete: MessageStatus = { type: 'complete', reason: 'stop' }
const cancelled: MessageStatus = { type: 'incomplete', reason: 'cancelled' }
const interrupt: MessageStatus = { type: 'requires-action', reason: 'interrupt' }

/** A tool call waiting for a person: it holds a `suspendPayload` and has no result yet. */
export const isSuspended = (part: MessagePart): part is ToolCallPart =>
  part.type === 'tool-call' && part.suspendPayload !== undefined && part.state === undefined

/**
 * An assistant message's status, from its execution's: `running` → running; `success` →
 * complete, or requires-action (`interrupt`) while one of its tool calls is suspended;
 * `cancelled` → incomplete/cancelled; `error` → incomplete/error with the recorded message;
 * `interrupted` (the server went away under the turn) → incomplete/other.
 */
export function messageStatus(message: Message): MessageStatus {
  switch (message.executionStatus) {
    case 'running':
      return message.content.some(isSuspended) ? interrupt : running
    case 'success':
      return message.content.some(isSuspended) ? interrupt : complete
    case 'cancelled':
      return cancelled
    case 'error':
      return {
        type: 'incomplete',
        reason: 'error',
        error: message.executionError ?? 'The agent failed.',
      }
    case 'interrupted':
      return {
        type: 'incomplete',
        reason: 'other',
        error: message.executionError ?? 'The turn was interrupted: the server went away.',
      }
  }
}

/** `convertMessage` of the external store: one recorded message as assistant-ui's. */
export function convertMessage(message: Message): ThreadMessageLike {
  const custom = {
    executionId: message.executionId,
    executionStatus: message.executionStatus,
    ...(message.executionError !== undefined && { executionError: message.executionError }),
  }
  const common = { id: message.id, createdAt: new Date(message.createdAt), metadata: { custom } }
  if (message.role === 'user')
    // A user message carries text (and files); assistant-ui refuses any other part there.
    return {
      ...common,
      role: 'user',
      content: message.content.flatMap((part) =>
        part.type === 'text' || part.type === 'file' ? [convertPart(part, message)] : [],
      ),
    }
  return {
    ...common,
    role: 'assistant',
    status: messageStatus(message),
    content: message.content.map((part) => convertPart(part, message)),
  }
}

/** One part, as the table in the module's docstring says. */
export function convertPart(part: MessagePart, message: Message): LikePart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text }
    case 'reasoning':
      return { type: 'reasoning', text: part.text }
    case 'file':
      return {
        type: 'file',
        data: part.fileId,
        sourceType: 'id',
        filename: part.fileName,
        mimeType: part.mimeType,
        providerMetadata: { previewChat: { fileId: part.fileId, sizeBytes: part.sizeBytes } },
      }
    case 'tool-call':
      return convertToolCall(part, message)
  }
}

const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * `JSON.stringify` that never throws. A read's values are parsed JSON, but a message can come
 * another way (another tab's relay, an app's own snapshot) holding what JSON has no text for: a
 * BigInt, a cycle, a `toJSON` or getter that throws is described instead (`[object Object]`,
 * `[object BigInt]`); a function is its source.
 */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

function convertToolCall(part: ToolCallPart, message: Message): LikeToolCall {
  const rejected =
    part.state === 'rejected' || (part.state === undefined && part.error !== undefined)
  // Passed as they are: a read's values are parsed JSON; one from elsewhere is only shown.
  const args: JsonObject =
    part.input === undefined
      ? {}
      : isJsonObject(part.input)
        ? part.input
        : { input: part.input as JsonValue }
  return {
    type: 'tool-call',
    toolCallId: part.toolCallId,
    toolName: part.toolName,
    args,
    argsText: part.input === undefined ? '' : jsonText(part.input),
    ...(rejected
      ? { result: part.error ?? part.output ?? null, isError: true }
      : part.state === 'resolved' && { result: part.output ?? null }),
    ...(isSuspended(part) && { interrupt: { type: 'human', payload: part.suspendPayload } }),
    ...(part.childTrace && { messages: [childMessage(part, part.childTrace, message)] }),
  }
}

/**
 * A delegation's child agent as one assistant message nested in the tool call (assistant-ui's
 * `messages` of a tool call, as its sub-agent examples use): its reasoning segments, then its
 * steps as tool calls (a finished step has a `null` result: the trace records no output), then
 * its text. The trace keeps no order between them, so none is invented.
 */
function childMessage(
  part: ToolCallPart,
  trace: ChildTrace,
  parent: Message,
): ThreadAssistantMessage {
  const content: ThreadAssistantMessage['content'][number][] = [
    ...trace.reasoningSegments.map((segment) => ({
      type: 'reasoning' as const,
      text: segment.content,
    })),
    ...trace.steps.map((step) => ({
      type: 'tool-call' as const,
      toolCallId: step.toolCallId,
      toolName: step.toolName,
      args: {},
      argsText: '',
      ...(!step.running && { result: null }),
    })),
    ...(trace.text === '' ? [] : [{ type: 'text' as const, text: trace.text }]),
  ]
  const parentStatus = messageStatus(parent)
  const status: MessageStatus =
    part.state === undefined && parentStatus.type === 'running'
      ? running
      : trace.truncated
        ? { type: 'incomplete', reason: 'length' }
        : part.state === 'rejected'
          ? parentStatus.type === 'incomplete'
            ? parentStatus
            : { type: 'incomplete', reason: 'error', error: part.error ?? null }
          : complete
  return {
    id: `${part.toolCallId}:child`,
    role: 'assistant',
    createdAt: new Date(parent.createdAt),
    content,
    status,
    metadata: {
      unstable_state: null,
      unstable_annotations: [],
      unstable_data: [],
      steps: [],
      custom: { truncated: trace.truncated === true },
    },
  }
}
