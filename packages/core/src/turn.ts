import type { SubagentChunk, TurnEvent } from './contract/events'
import type { ChildTrace, Message, MessagePart, ToolCallPart } from './contract/snapshot'

/**
 * A turn as it is being streamed, shaped exactly like the recorded snapshot: the same message ids
 * (`${executionId}:user`, `${executionId}:assistant`) and the same parts. When a snapshot replaces
 * it, nothing visibly jumps.
 */
export interface LiveTurn {
  executionId: string
  sessionId: string
  /** The person's message; `null` for a resumed execution, which has none. */
  user: Message | null
  assistant: Message
  /** Where each live stream writes: `text:<id>`, `reasoning:<id>`, `tool:<toolCallId>` → part index. */
  streams: Readonly<Record<string, number>>
  /** Characters of child text and reasoning used so far, per delegation (parent tool call id). */
  childChars: Readonly<Record<string, number>>
  /** A terminal event (`done`, `error`, `tool-call-suspended`) arrived. */
  ended: boolean
}

export interface TurnOptions {
  /** Child text and reasoning budget per delegation (spec: "the existing 4,000-character limit"). */
  delegationCharLimit: number
}

export const DEFAULT_DELEGATION_CHAR_LIMIT = 4000

/** The turn that `execution-started` opens. */
export function startTurn(init: {
  executionId: string
  sessionId: string
  /** The submitted text; omitted for a resumed execution. */
  message?: string
  createdAt: string
}): LiveTurn {
  const base = {
    executionId: init.executionId,
    executionStatus: 'running',
    createdAt: init.createdAt,
  } as const
  return {
    executionId: init.executionId,
    sessionId: init.sessionId,
    user:
      init.message === undefined
        ? null
        : {
            ...base,
            id: `${init.executionId}:user`,
            role: 'user',
            content: [{ type: 'text', text: init.message }],
          },
    assistant: { ...base, id: `${init.executionId}:assistant`, role: 'assistant', content: [] },
    streams: {},
    childChars: {},
    ended: false,
  }
}

/**
 * Applies one turn event. Pure, and O(delta + parts of the message): it copies only the assistant
 * message's part list and the part that changed, never the transcript.
 */
export function applyTurnEvent(turn: LiveTurn, event: TurnEvent, options: TurnOptions): LiveTurn {
  switch (event.type) {
    case 'text-start':
      return open(turn, `text:${event.id}`, { type: 'text', text: '' })
    case 'reasoning-start':
      return open(turn, `reasoning:${event.id}`, { type: 'reasoning', text: '' })
    case 'text-delta':
    case 'reasoning-delta': {
      const kind = event.type === 'text-delta' ? 'text' : 'reasoning'
      const key = `${kind}:${event.id}`
      // A delta without its start (a server that skips `*-start`) opens the stream itself.
      const opened =
        turn.streams[key] === undefined ? open(turn, key, { type: kind, text: '' }) : turn
      return update(opened, key, (part) =>
        'text' in part ? { ...part, text: part.text + event.delta } : part,
      )
    }
    case 'tool-input-start':
      return upsertTool(turn, event.toolCallId, event.toolName, (part) => part)
    case 'tool-call':
      return upsertTool(turn, event.toolCallId, event.toolName, (part) => ({
        ...part,
        input: event.input,
      }))
    case 'tool-execution-start':
      return upsertTool(turn, event.toolCallId, event.toolName, (part) => ({
        ...part,
        startTime: event.startTime,
      }))
    case 'tool-execution-end':
      return upsertTool(turn, event.toolCallId, event.toolName, (part) => ({
        ...part,
        endTime: event.endTime,
      }))
    case 'tool-result':
      return upsertTool(turn, event.toolCallId, event.toolName, (part) => ({
        ...part,
        output: event.output,
        state: event.isError ? 'rejected' : 'resolved',
      }))
    case 'tool-call-suspended': {
      const { payload } = event
      const suspended = upsertTool(turn, payload.toolCallId, payload.toolName, (part) => ({
        ...part,
        input: payload.input,
        suspendPayload: payload,
      }))
      return end(suspended, 'success')
    }
    case 'subagent-chunk':
      return applyChildChunk(turn, event.parentToolCallId, event.chunk, options)
    case 'error':
      return end(turn, 'error', event.message)
    case 'done':
      return end(turn, 'success')
    default:
      // execution-started opens the turn (startTurn); steps and warnings change no part.
      return turn
  }
}

/**
 * Applies a batch of events in order, stopping at a terminal one. Consecutive deltas of one stream
 * are joined first, so a network chunk of hundreds of deltas copies the message once.
 */
export function applyTurnEvents(
  turn: LiveTurn,
  events: readonly TurnEvent[],
  options: TurnOptions,
): LiveTurn {
  let current = turn
  let pending: Extract<TurnEvent, { type: 'text-delta' | 'reasoning-delta' }> | null = null
  let joined: string[] = []
  const flush = () => {
    if (pending) current = applyTurnEvent(current, { ...pending, delta: joined.join('') }, options)
    pending = null
    joined = []
  }
  for (const event of events) {
    if (current.ended) break
    if (event.type === 'text-delta' || event.type === 'reasoning-delta') {
      if (pending && (pending.type !== event.type || pending.id !== event.id)) flush()
      pending ??= event
      joined.push(event.delta)
      continue
    }
    flush()
    current = applyTurnEvent(current, event, options)
  }
  flush()
  return current
}

function withContent(turn: LiveTurn, content: MessagePart[], streams = turn.streams): LiveTurn {
  return { ...turn, streams, assistant: { ...turn.assistant, content } }
}

function open(turn: LiveTurn, key: string, part: MessagePart): LiveTurn {
  const content = [...turn.assistant.content, part]
  return withContent(turn, content, { ...turn.streams, [key]: content.length - 1 })
}

function update(turn: LiveTurn, key: string, change: (part: MessagePart) => MessagePart): LiveTurn {
  const index = turn.streams[key]
  const part = index === undefined ? undefined : turn.assistant.content[index]
  if (index === undefined || part === undefined) return turn
  const content = turn.assistant.content.slice()
  content[index] = change(part)
  return withContent(turn, content)
}

function upsertTool(
  turn: LiveTurn,
  toolCallId: string,
  toolName: string,
  change: (part: ToolCallPart) => ToolCallPart,
): LiveTurn {
  const key = `tool:${toolCallId}`
  const opened =
    turn.streams[key] === undefined
      ? open(turn, key, { type: 'tool-call', toolName, toolCallId })
      : turn
  return update(opened, key, (part) => (part.type === 'tool-call' ? change(part) : part))
}

function end(turn: LiveTurn, status: 'success' | 'error', executionError?: string): LiveTurn {
  const assistant: Message = { ...turn.assistant, executionStatus: status }
  if (executionError !== undefined) assistant.executionError = executionError
  const user = turn.user && { ...turn.user, executionStatus: status }
  return { ...turn, ended: true, assistant, user }
}

const emptyTrace = (): ChildTrace => ({ text: '', reasoningSegments: [], steps: [] })

/**
 * A delegation's child output. Text and reasoning share one budget per delegation (spec: "Child
 * text and reasoning share the existing 4,000-character limit for each delegation. Text beyond
 * that limit is not part of recovery."), so the live view keeps exactly what recovery will show.
 */
function applyChildChunk(
  turn: LiveTurn,
  parentToolCallId: string,
  chunk: SubagentChunk,
  options: TurnOptions,
) {
  const used = turn.childChars[parentToolCallId] ?? 0
  const limit = options.delegationCharLimit
  let spent = 0
  const budgeted = (delta: string) => {
    const kept = delta.slice(0, Math.max(0, limit - used))
    spent = kept.length
    return kept
  }
  const changeTrace = (trace: ChildTrace): ChildTrace => {
    switch (chunk.type) {
      case 'text-delta':
        return { ...trace, text: trace.text + budgeted(chunk.delta) }
      case 'reasoning-start':
        return {
          ...trace,
          reasoningSegments: [
            ...trace.reasoningSegments,
            { id: `segment-${trace.reasoningSegments.length + 1}`, content: '' },
          ],
        }
      case 'reasoning-delta': {
        const segments = trace.reasoningSegments.slice()
        const last = segments.pop() ?? { id: 'segment-1', content: '' }
        segments.push({ ...last, content: last.content + budgeted(chunk.delta) })
        return { ...trace, reasoningSegments: segments }
      }
      case 'tool-input-start':
      case 'tool-execution-start':
      case 'tool-execution-end': {
        const running = chunk.type !== 'tool-execution-end'
        const step = { toolCallId: chunk.toolCallId, toolName: chunk.toolName, running }
        const at = trace.steps.findIndex((existing) => existing.toolCallId === chunk.toolCallId)
        const steps = trace.steps.slice()
        if (at === -1) steps.push(step)
        else steps[at] = step
        return { ...trace, steps }
      }
      case 'reasoning-end':
        return trace
    }
  }
  const changed = upsertTool(turn, parentToolCallId, 'delegate', (part) => {
    const trace = changeTrace(part.childTrace ?? emptyTrace())
    if (used + spent >= limit) trace.truncated = true
    return { ...part, childTrace: trace }
  })
  return spent === 0
    ? changed
    : { ...changed, childChars: { ...changed.childChars, [parentToolCallId]: used + spent } }
}

/** Characters of child text and reasoning in a recorded trace. */
export function childTraceChars(trace: ChildTrace): number {
  return trace.reasoningSegments.reduce(
    (sum, segment) => sum + segment.content.length,
    trace.text.length,
  )
}

/** The turn's messages in transcript order. */
export function turnMessages(turn: LiveTurn): Message[] {
  return turn.user ? [turn.user, turn.assistant] : [turn.assistant]
}
