import type { SuspendedPayload, TurnEvent } from '@preview-chat/core/contract'
import type { AgentContext, AgentOutcome } from '../agent'

/**
 * The parts of `streamText(...).fullStream` the adapter maps, as AI SDK 6.x streams them and 7.x
 * keeps them: `text-*` and `reasoning-*` (`id`, the delta in `text`), `tool-input-start` (`id` =
 * the tool call's id, `toolName`), `tool-input-delta` (`id`, `delta`), `tool-call`, `tool-result`
 * (`output`; `preliminary` ones are skipped), `tool-error` (`error`), `tool-output-denied`,
 * `tool-approval-request` (`approvalId`, `toolCall`), `start-step`, `finish-step`, `error`, `abort`.
 * 7.x adds `custom`, `reasoning-file`, `tool-approval-response`, `steering-message` and `ping`,
 * which carry nothing the contract records, and `isAutomatic`/`reason` on an approval request.
 */
const ignored = new Set([
  'start',
  'finish',
  'tool-input-end',
  'source',
  'file',
  'raw',
  // 7.x only.
  'custom',
  'reasoning-file',
  'tool-approval-response',
  'steering-message',
  'ping',
])

/** Something the adapter tells the app's log: a part it did not understand, a model error. */
export interface AiSdkLogEntry {
  level: 'warn' | 'error'
  message: string
  /** The part that was ignored, or the error the model call failed with (server-side only). */
  detail?: unknown
}

/** What a turn's stream ended with, before the adapter turns it into the agent's outcome. */
export type StreamEnd =
  | { kind: 'done' }
  | { kind: 'approval'; toolCallId: string; toolName: string; input: unknown }
  | { kind: 'error'; error: unknown }

interface OpenTool {
  toolName: string
  /** When the model finished writing its input: the tool runs from then on. */
  calledAt?: number
  started: boolean
}

type Part = Record<string, unknown> & { type: string }

/**
 * Reads a `fullStream` to its end and emits the contract's events for it. Every part is checked
 * before use: one that is not an object with the fields its type needs is logged and skipped.
 */
export async function pipeFullStream(
  fullStream: AsyncIterable<unknown>,
  context: AgentContext,
  log: (entry: AiSdkLogEntry) => void,
): Promise<StreamEnd> {
  const mapper = new PartMapper(context)
  for await (const raw of fullStream) {
    if (context.signal.aborted) break
    const part = partOf(raw)
    const end = part ? mapper.map(part) : 'unknown'
    if (end === 'unknown')
      log({ level: 'warn', message: 'Ignored an AI SDK stream part', detail: raw })
    else if (end !== undefined) return end
  }
  return mapper.approval ?? { kind: 'done' }
}

function partOf(raw: unknown): Part | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined
  const { type } = raw as { type?: unknown }
  return typeof type === 'string' ? (raw as Part) : undefined
}

const isString = (value: unknown): value is string => typeof value === 'string'

class PartMapper {
  /** The AI SDK's text and reasoning ids → the ids this turn streams them under. */
  private readonly blocks = new Map<string, string>()
  private readonly tools = new Map<string, OpenTool>()
  approval: Extract<StreamEnd, { kind: 'approval' }> | undefined

  constructor(private readonly context: AgentContext) {}

  /** Emits what `part` means; a `StreamEnd` stops the turn, `'unknown'` is logged by the caller. */
  map(part: Part): StreamEnd | 'unknown' | undefined {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start':
        return this.blockStart(part, part.type === 'text-start' ? 'text' : 'reasoning')
      case 'text-delta':
      case 'reasoning-delta':
        return this.blockDelta(part, part.type === 'text-delta' ? 'text' : 'reasoning')
      case 'text-end':
      case 'reasoning-end':
        return this.blockEnd(part, part.type === 'text-end' ? 'text' : 'reasoning')
      case 'tool-input-start':
        return this.toolInputStart(part)
      case 'tool-input-delta':
        return this.toolInputDelta(part)
      case 'tool-call':
        return this.toolCall(part)
      case 'tool-result':
      case 'tool-error':
      case 'tool-output-denied':
        return this.toolEnd(part)
      case 'tool-approval-request':
        return this.approvalRequest(part)
      case 'start-step':
      case 'finish-step':
        this.context.emit({ type: part.type })
        return undefined
      case 'error':
        return { kind: 'error', error: part.error }
      case 'abort':
        // The turn's signal fired (a Stop): the runner ends the turn as cancelled.
        return { kind: 'done' }
      default:
        return ignored.has(part.type) ? undefined : 'unknown'
    }
  }

  private blockStart(part: Part, kind: 'text' | 'reasoning') {
    if (!isString(part.id)) return 'unknown'
    const id = this.context.id(kind)
    this.blocks.set(`${kind}:${part.id}`, id)
    this.context.emit({ type: `${kind}-start`, id })
    return undefined
  }

  private blockDelta(part: Part, kind: 'text' | 'reasoning') {
    if (!isString(part.id) || !isString(part.text)) return 'unknown'
    const id = this.blocks.get(`${kind}:${part.id}`)
    // A delta without its start (never from `streamText`): the start is made up, not the text lost.
    if (id === undefined) this.blockStart(part, kind)
    const streamId = this.blocks.get(`${kind}:${part.id}`) as string
    if (part.text !== '')
      this.context.emit({ type: `${kind}-delta`, id: streamId, delta: part.text })
    return undefined
  }

  private blockEnd(part: Part, kind: 'text' | 'reasoning') {
    if (!isString(part.id)) return 'unknown'
    const id = this.blocks.get(`${kind}:${part.id}`)
    if (id === undefined) return undefined
    this.blocks.delete(`${kind}:${part.id}`)
    this.context.emit({ type: `${kind}-end`, id })
    return undefined
  }

  private toolInputStart(part: Part) {
    if (!isString(part.id) || !isString(part.toolName)) return 'unknown'
    this.openTool(part.id, part.toolName)
    return undefined
  }

  private openTool(toolCallId: string, toolName: string): OpenTool {
    const known = this.tools.get(toolCallId)
    if (known) return known
    const tool: OpenTool = { toolName, started: false }
    this.tools.set(toolCallId, tool)
    this.context.emit({ type: 'tool-input-start', toolCallId, toolName })
    return tool
  }

  private toolInputDelta(part: Part) {
    if (!isString(part.id) || !isString(part.delta)) return 'unknown'
    if (this.tools.has(part.id) && part.delta !== '') {
      this.context.emit({ type: 'tool-input-delta', toolCallId: part.id, delta: part.delta })
    }
    return undefined
  }

  private toolCall(part: Part) {
    const { toolCallId, toolName } = part
    if (!isString(toolCallId) || !isString(toolName)) return 'unknown'
    const tool = this.openTool(toolCallId, toolName)
    tool.calledAt = this.context.now()
    this.context.emit({ type: 'tool-call', toolCallId, toolName, input: part.input ?? {} })
    return undefined
  }

  /**
   * A tool's result, error or denial. The AI SDK runs a tool after its call without saying when
   * it starts (6.x, 7.x), so its execution is announced here, from the time of the call.
   */
  private toolEnd(part: Part) {
    const { toolCallId, toolName } = part
    if (!isString(toolCallId) || !isString(toolName)) return 'unknown'
    if (part.type === 'tool-result' && part.preliminary === true) return undefined
    const tool = this.tools.get(toolCallId) ?? { toolName, started: false }
    const now = this.context.now()
    const isError = part.type !== 'tool-result'
    if (part.type !== 'tool-output-denied') {
      const startTime = tool.calledAt ?? now
      this.context.emit({ type: 'tool-execution-start', toolCallId, toolName, startTime })
      this.context.emit({ type: 'tool-execution-end', toolCallId, toolName, isError, endTime: now })
    }
    this.tools.delete(toolCallId)
    this.context.emit(toolResultEvent(part, toolCallId, toolName))
    return undefined
  }

  /** The first request suspends the turn at the step's end; `streamText` runs no other step. */
  private approvalRequest(part: Part) {
    const call = partOf(part.toolCall)
    if (!isString(part.approvalId) || !call) return 'unknown'
    const { toolCallId, toolName } = call
    if (!isString(toolCallId) || !isString(toolName)) return 'unknown'
    this.approval ??= { kind: 'approval', toolCallId, toolName, input: call.input ?? {} }
    return undefined
  }
}

function toolResultEvent(part: Part, toolCallId: string, toolName: string): TurnEvent {
  const base = { type: 'tool-result', toolCallId, toolName } as const
  switch (part.type) {
    case 'tool-result':
      return { ...base, output: part.output ?? null }
    case 'tool-error':
      return { ...base, output: toolErrorText(part.error), isError: true }
    default:
      return { ...base, output: 'The person declined.', isError: true }
  }
}

/** A tool's own error, as the person sees it: its message, never its stack. */
function toolErrorText(error: unknown): string {
  if (error instanceof Error) return error.message
  return isString(error) ? error : 'The tool failed.'
}

/** The turn's outcome for how its stream ended. */
export function outcomeOf(end: StreamEnd, context: AgentContext): AgentOutcome {
  switch (end.kind) {
    case 'done':
      return { kind: 'done' }
    case 'error':
      return { kind: 'error', ...modelErrorOf(end.error) }
    case 'approval': {
      const { toolCallId, toolName, input } = end
      const payload: SuspendedPayload = { toolCallId, runId: context.id('run'), toolName, input }
      return { kind: 'suspended', payload }
    }
  }
}

/**
 * What the person is told when the model call fails: its kind and HTTP status, never the
 * provider's own message or body (they can echo a key, a prompt, an internal URL) nor a stack.
 * The error itself goes to the app's log.
 */
export function modelErrorOf(error: unknown): { message: string; errorCode: string } {
  const { name, statusCode, lastError } = (
    typeof error === 'object' && error !== null ? error : {}
  ) as { name?: unknown; statusCode?: unknown; lastError?: unknown }
  // `RetryError` wraps the attempts; its last one says why.
  if (name === 'AI_RetryError' && lastError !== undefined) return modelErrorOf(lastError)
  if (typeof statusCode === 'number') {
    return {
      message: `The model provider answered HTTP ${statusCode}. Send the message again; if it keeps failing, the server's log says why.`,
      errorCode: 'model_http_error',
    }
  }
  const kind = isString(name) && /^AI_\w+$/.test(name) ? ` (${name.slice(3)})` : ''
  return {
    message: `The model call failed${kind}. Send the message again; if it keeps failing, the server's log says why.`,
    errorCode: 'model_error',
  }
}
