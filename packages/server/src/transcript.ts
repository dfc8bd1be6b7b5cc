import type {
  ChildTrace,
  MessagePart,
  ReasoningPart,
  SubagentChunk,
  TextPart,
  ToolCallPart,
  TurnEvent,
} from '@preview-chat/core'

/**
 * Folds the live events of one execution into the parts of its recorded assistant message.
 *
 * "Snapshots do not contain original text-stream IDs or every transient live event": the deltas of
 * one text (or reasoning) stream become one part without its id, a tool call one `tool-call` part.
 * Parts keep the order in which their stream started.
 */
export interface Transcript {
  apply(event: TurnEvent): void
  /** Makes a tool call of an earlier execution known, so that a resume can complete it. */
  seedToolCall(toolCallId: string, toolName: string, input: unknown): void
  /** Closes every tool call still open as rejected (a Stop or a shutdown). */
  rejectOpenToolCalls(error: string, endTime: number): ToolCallPart[]
  /** A deep copy of the parts so far. */
  parts(): MessagePart[]
  /** Whether anything changed since the last `markRecorded()`. */
  readonly dirty: boolean
  markRecorded(): void
}

export interface TranscriptOptions {
  /** The budget of a delegation's child text and reasoning, counted together. */
  delegationCharLimit: number
  now: () => number
}

interface Delegation {
  trace: ChildTrace
  /** Characters of text and reasoning recorded so far, against the shared budget. */
  used: number
  openSegment: number | undefined
}

export function createTranscript(options: TranscriptOptions): Transcript {
  const parts: MessagePart[] = []
  const texts = new Map<string, TextPart>()
  const reasonings = new Map<string, ReasoningPart>()
  const toolCalls = new Map<string, ToolCallPart>()
  const seeds = new Map<string, { toolName: string; input: unknown }>()
  const delegations = new Map<string, Delegation>()
  let dirty = false

  const toolCall = (toolCallId: string, toolName: string): ToolCallPart => {
    let part = toolCalls.get(toolCallId)
    if (!part) {
      const seed = seeds.get(toolCallId)
      part = {
        type: 'tool-call',
        toolName: seed?.toolName ?? toolName,
        toolCallId,
        input: seed?.input ?? null,
      }
      toolCalls.set(toolCallId, part)
      parts.push(part)
    }
    return part
  }

  const text = (id: string): TextPart => {
    let part = texts.get(id)
    if (!part) {
      part = { type: 'text', text: '' }
      texts.set(id, part)
      parts.push(part)
    }
    return part
  }

  const reasoning = (id: string): ReasoningPart => {
    let part = reasonings.get(id)
    if (!part) {
      part = { type: 'reasoning', text: '', startTime: options.now() }
      reasonings.set(id, part)
      parts.push(part)
    }
    return part
  }

  const delegation = (parentToolCallId: string): Delegation => {
    let entry = delegations.get(parentToolCallId)
    if (!entry) {
      const part = toolCall(parentToolCallId, 'delegate')
      part.childTrace = { text: '', reasoningSegments: [], steps: [] }
      entry = { trace: part.childTrace, used: 0, openSegment: undefined }
      delegations.set(parentToolCallId, entry)
    }
    return entry
  }

  // "Child text and reasoning share the existing 4,000-character limit for each delegation. Text
  // beyond that limit is not part of recovery." A delta that crosses the limit is cut at it.
  const withinBudget = (entry: Delegation, delta: string): string => {
    const room = Math.max(0, options.delegationCharLimit - entry.used)
    const kept = delta.slice(0, room)
    entry.used += kept.length
    return kept
  }

  const applyChunk = (entry: Delegation, chunk: SubagentChunk) => {
    const { trace } = entry
    switch (chunk.type) {
      case 'text-delta':
        trace.text += withinBudget(entry, chunk.delta)
        return
      case 'reasoning-start':
        entry.openSegment = trace.reasoningSegments.length
        trace.reasoningSegments.push({
          id: `segment-${trace.reasoningSegments.length + 1}`,
          content: '',
          startTime: options.now(),
        })
        return
      case 'reasoning-delta': {
        if (entry.openSegment === undefined) applyChunk(entry, { type: 'reasoning-start' })
        const segment = trace.reasoningSegments[entry.openSegment ?? -1]
        if (segment) segment.content += withinBudget(entry, chunk.delta)
        return
      }
      case 'reasoning-end': {
        const segment = trace.reasoningSegments[entry.openSegment ?? -1]
        if (segment) segment.endTime = options.now()
        entry.openSegment = undefined
        return
      }
      case 'tool-input-start':
      case 'tool-execution-start': {
        const step = trace.steps.find((s) => s.toolCallId === chunk.toolCallId)
        if (step) step.running = true
        else
          trace.steps.push({
            toolCallId: chunk.toolCallId,
            toolName: chunk.toolName,
            running: true,
          })
        return
      }
      case 'tool-execution-end': {
        const step = trace.steps.find((s) => s.toolCallId === chunk.toolCallId)
        if (step) step.running = false
        else
          trace.steps.push({
            toolCallId: chunk.toolCallId,
            toolName: chunk.toolName,
            running: false,
          })
        return
      }
    }
  }

  const apply = (event: TurnEvent) => {
    switch (event.type) {
      case 'text-start':
        text(event.id)
        break
      case 'text-delta':
        text(event.id).text += event.delta
        break
      case 'reasoning-start':
        reasoning(event.id)
        break
      case 'reasoning-delta':
        reasoning(event.id).text += event.delta
        break
      case 'reasoning-end':
        reasoning(event.id).endTime = options.now()
        break
      case 'tool-input-start':
        toolCall(event.toolCallId, event.toolName)
        break
      case 'tool-call':
        toolCall(event.toolCallId, event.toolName).input = event.input
        break
      case 'tool-execution-start':
        toolCall(event.toolCallId, event.toolName).startTime = event.startTime
        break
      case 'tool-execution-end':
        toolCall(event.toolCallId, event.toolName).endTime = event.endTime
        break
      case 'tool-result': {
        const part = toolCall(event.toolCallId, event.toolName)
        part.output = event.output
        const rejected = event.isError === true || event.canceled === true
        part.state = rejected ? 'rejected' : 'resolved'
        if (event.canceled) part.error = 'Cancelled'
        else if (event.isError) part.error = errorText(event.output)
        delete part.suspendPayload
        break
      }
      case 'tool-call-suspended': {
        const part = toolCall(event.payload.toolCallId, event.payload.toolName)
        part.suspendPayload = event.payload
        break
      }
      case 'subagent-chunk':
        applyChunk(delegation(event.parentToolCallId), event.chunk)
        break
      case 'tool-input-delta':
      case 'start-step':
      case 'finish-step':
      case 'text-end':
      case 'execution-started':
      case 'warning':
      case 'error':
      case 'done':
        // Boundaries and live-only notices: nothing to record in the parts.
        return
    }
    dirty = true
  }

  return {
    apply,
    seedToolCall(toolCallId, toolName, input) {
      seeds.set(toolCallId, { toolName, input })
    },
    rejectOpenToolCalls(error, endTime) {
      const open = [...toolCalls.values()].filter(
        (part) => part.state === undefined && part.suspendPayload === undefined,
      )
      for (const part of open) {
        part.state = 'rejected'
        part.error = error
        part.endTime ??= endTime
        for (const step of part.childTrace?.steps ?? []) step.running = false
      }
      if (open.length > 0) dirty = true
      return open
    },
    parts: () => structuredClone(parts),
    get dirty() {
      return dirty
    },
    markRecorded() {
      dirty = false
    },
  }
}

function errorText(output: unknown): string {
  if (typeof output === 'string') return output
  try {
    return JSON.stringify(output)
  } catch {
    return 'The tool failed.'
  }
}
