import type {
  Message,
  MessagePart,
  SuspendedPayload,
  ToolCallPart,
} from '@preview-chat/core/contract'
import type {
  AssistantModelMessage,
  ModelMessage,
  ToolApprovalResponse,
  ToolModelMessage,
  ToolResultPart,
} from 'ai'

/** What a person answered to a tool approval: `resumeData` of `POST …/chat/resume`. */
export interface ApprovalAnswer {
  approved: boolean
  reason?: string
}

/**
 * Reads `resumeData` as an approval: `{ "approved": true }` approves; anything else declines
 * (with its `reason` when it is a string).
 */
export function approvalOf(resumeData: unknown): ApprovalAnswer {
  if (typeof resumeData !== 'object' || resumeData === null) return { approved: false }
  const { approved, reason } = resumeData as { approved?: unknown; reason?: unknown }
  return { approved: approved === true, ...(typeof reason === 'string' && { reason }) }
}

/** Said to the model for a recorded tool call that never got its result (a Stop, a failure). */
const unfinished = 'The tool call did not finish.'

/**
 * The thread's record as the AI SDK's model messages: a user message's text; an assistant
 * message's text, reasoning and tool calls, split at each tool call's results (one `tool` message
 * each) as the steps were. A recorded file part is not sent (the record keeps its name, not its
 * bytes). With `resuming`, the suspended call gets its approval request and the person's answer
 * (`approvalId` = the suspension's `runId`), which `streamText` executes or denies.
 */
export function modelMessagesOf(
  history: readonly Message[],
  resuming?: { payload: SuspendedPayload; answer: ApprovalAnswer },
): ModelMessage[] {
  const messages: ModelMessage[] = []
  const calls = toolCallsOf(history, resuming?.payload.toolCallId)
  for (const message of history) {
    if (message.role === 'user') {
      const text = textOf(message.content)
      if (text !== '') messages.push({ role: 'user', content: text })
    } else {
      messages.push(...assistantMessagesOf(message.content, calls))
    }
  }
  if (resuming) messages.push(...approvalMessages(messages, resuming.payload, resuming.answer))
  return messages
}

function textOf(parts: readonly MessagePart[]): string {
  return parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('')
}

/**
 * The tool calls of the record, each told to the model once, where it was made: a call that
 * suspended is recorded again, with its result, by the execution that resumed it.
 */
interface ToolCalls {
  /** The last recorded part of each call: the one with its result, if it has one. */
  readonly final: ReadonlyMap<string, ToolCallPart>
  /** The call being resumed: its result is the person's answer, not a recorded one. */
  readonly pending: string | undefined
  /** Calls told already. */
  readonly told: Set<string>
}

function toolCallsOf(history: readonly Message[], pending: string | undefined): ToolCalls {
  const final = new Map<string, ToolCallPart>()
  for (const message of history) {
    for (const part of message.content)
      if (part.type === 'tool-call') final.set(part.toolCallId, part)
  }
  return { final, pending, told: new Set() }
}

/** One recorded answer as alternating assistant and tool messages, one pair per step. */
function assistantMessagesOf(parts: readonly MessagePart[], calls: ToolCalls): ModelMessage[] {
  const messages: ModelMessage[] = []
  let content: Exclude<AssistantModelMessage['content'], string> = []
  let results: ToolResultPart[] = []
  const flush = () => {
    if (content.length > 0) messages.push({ role: 'assistant', content })
    if (results.length > 0) messages.push({ role: 'tool', content: results })
    content = []
    results = []
  }
  for (const part of parts) {
    if (part.type === 'text' || part.type === 'reasoning') {
      if (results.length > 0) flush()
      if (part.text !== '') content.push({ type: part.type, text: part.text })
    } else if (part.type === 'tool-call' && part.input !== undefined) {
      const { toolCallId, toolName, input } = part
      if (calls.told.has(toolCallId)) continue
      calls.told.add(toolCallId)
      content.push({ type: 'tool-call', toolCallId, toolName, input })
      if (toolCallId !== calls.pending)
        results.push(toolResultOf(calls.final.get(toolCallId) ?? part))
    }
  }
  flush()
  return messages
}

function toolResultOf(part: ToolCallPart): ToolResultPart {
  const { toolCallId, toolName } = part
  const output: ToolResultPart['output'] =
    part.state === 'resolved'
      ? { type: 'json', value: (part.output ?? null) as never }
      : { type: 'error-text', value: part.state === 'rejected' ? errorText(part) : unfinished }
  return { type: 'tool-result', toolCallId, toolName, output }
}

function errorText(part: ToolCallPart): string {
  if (part.error !== undefined) return part.error
  return typeof part.output === 'string' ? part.output : 'The tool call failed.'
}

/**
 * The approval request on the assistant message that holds the suspended call (one is added if
 * the record lost it), and the person's answer in a tool message after it.
 */
function approvalMessages(
  messages: ModelMessage[],
  payload: SuspendedPayload,
  answer: ApprovalAnswer,
): ModelMessage[] {
  const { toolCallId, toolName, input, runId: approvalId } = payload
  const request = { type: 'tool-approval-request', approvalId, toolCallId } as const
  const holder = messages.findLast(
    (message): message is AssistantModelMessage & { content: unknown[] } =>
      message.role === 'assistant' &&
      Array.isArray(message.content) &&
      message.content.some((part) => part.type === 'tool-call' && part.toolCallId === toolCallId),
  )
  const added: ModelMessage[] = []
  if (holder) holder.content.push(request)
  else {
    added.push({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId, toolName, input }, request],
    })
  }
  const response: ToolApprovalResponse = { type: 'tool-approval-response', approvalId, ...answer }
  // The answer goes in the last tool message (the step's other results), as `streamText` reads it.
  const last = messages.at(-1)
  if (added.length === 0 && last?.role === 'tool') {
    last.content.push(response)
    return []
  }
  const tool: ToolModelMessage = { role: 'tool', content: [response] }
  return [...added, tool]
}
