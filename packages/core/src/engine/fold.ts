import { byId, recordedMessageId, withId } from '../wire/contract/ids'
import { deltaJoin } from '../wire/contract/events'
import type { SubagentChunk, SuspendedPayload, TurnEvent } from '../wire/contract/events'
import type {
  ChildTrace,
  Message,
  MessagePart,
  Timestamp,
  ToolCallPart,
} from '../wire/contract/snapshot'

/**
 * The one fold of turn events. The client's live view and the reference server's recorder both
 * run it, so the same events give the same parts everywhere: when a recorded snapshot replaces a
 * live view, nothing visibly changes but what the server knows better (times, the final status).
 *
 * A `LiveTurn` is shaped exactly like the record: the same message ids (`${executionId}:user`,
 * `${executionId}:assistant`) and the same parts.
 */
export interface LiveTurn {
  executionId: string
  sessionId: string
  /** The person's message; `null` for a resumed execution, which has none. */
  user: Message | null
  assistant: Message
  /** Where each live stream writes: `text:<id>`, `reasoning:<id>`, `tool:<toolCallId>` → part index. */
  streams: Readonly<Record<string, number>>
  /** Per delegation (parent tool call id): characters of its budget used, and its open segment. */
  delegations: Readonly<Record<string, { used: number; openSegment: number | null }>>
  /** A resumed execution completes the tool call that suspended in an earlier one. */
  resumes: Pick<SuspendedPayload, 'toolCallId' | 'toolName' | 'input'> | null
  /** A terminal event (`done`, `error`, `tool-call-suspended`) arrived. */
  ended: boolean
  /**
   * A turn under a stand-in id (released n8n, `isStandIn`): the executions that had ended when it
   * began, which a later record names it by ([decision](../../../../docs/decisions/stand-in-ids.md)).
   * Absent on a turn the server named.
   */
  after?: readonly string[]
}

export interface TurnOptions {
  /** Child text and reasoning budget per delegation (spec: "the existing 4,000-character limit"). */
  delegationCharLimit: number
  /** The clock that stamps reasoning blocks (epoch ms). The record's times are the server's. */
  now: () => Timestamp
}

export const DEFAULT_DELEGATION_CHAR_LIMIT = 4000

/** The turn that `execution-started` opens. */
export function startTurn(init: {
  executionId: string
  sessionId: string
  /** The submitted text; omitted for a resumed execution. */
  message?: string
  createdAt: string
  resumes?: LiveTurn['resumes']
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
            id: recordedMessageId(init.executionId, 'user'),
            role: 'user',
            content: [{ type: 'text', text: init.message }],
          },
    assistant: {
      ...base,
      id: recordedMessageId(init.executionId, 'assistant'),
      role: 'assistant',
      content: [],
    },
    streams: {},
    delegations: {},
    resumes: init.resumes ?? null,
    ended: false,
  }
}

/**
 * Applies one turn event. Pure but for `options.now`, and O(delta + parts of the message): it
 * copies only the assistant message's part list and the part that changed, never the transcript.
 * Events that change no part (steps, warnings, text ends) return the same turn.
 */
export function applyTurnEvent(turn: LiveTurn, event: TurnEvent, options: TurnOptions): LiveTurn {
  switch (event.type) {
    case 'text-start':
      return opened(turn, `text:${event.id}`, () => ({ type: 'text', text: '' }))
    case 'reasoning-start':
      return opened(turn, `reasoning:${event.id}`, () => reasoningPart(options))
    case 'text-delta':
      // A delta without its start (a server that skips `*-start`) opens the stream itself.
      return update(
        opened(turn, `text:${event.id}`, () => ({ type: 'text', text: '' })),
        `text:${event.id}`,
        (part) => (part.type === 'text' ? { ...part, text: part.text + event.delta } : part),
      )
    case 'reasoning-delta':
      return update(
        opened(turn, `reasoning:${event.id}`, () => reasoningPart(options)),
        `reasoning:${event.id}`,
        (part) => (part.type === 'reasoning' ? { ...part, text: part.text + event.delta } : part),
      )
    case 'reasoning-end':
      return update(turn, `reasoning:${event.id}`, (part) =>
        part.type === 'reasoning' ? { ...part, endTime: options.now() } : part,
      )
    case 'tool-input-start':
      return tool(turn, event.toolCallId, event.toolName, (part) => part)
    case 'tool-call':
      return tool(turn, event.toolCallId, event.toolName, (part) => ({
        ...part,
        input: event.input,
      }))
    case 'tool-execution-start':
      return tool(turn, event.toolCallId, event.toolName, (part) => ({
        ...part,
        startTime: event.startTime,
      }))
    case 'tool-execution-end':
      return tool(turn, event.toolCallId, event.toolName, (part) => ({
        ...part,
        endTime: event.endTime,
      }))
    case 'tool-result':
      return tool(turn, event.toolCallId, event.toolName, (part) => {
        const { suspendPayload: _answered, ...rest } = part
        const result: ToolCallPart = { ...rest, output: event.output, state: 'resolved' }
        if (event.canceled === true || event.isError === true) {
          result.state = 'rejected'
          result.error = event.canceled === true ? 'Cancelled' : errorText(event.output)
        }
        // A result ends the call, and with it every step its delegation still ran.
        if (result.childTrace?.steps.some((step) => step.running)) {
          const steps = result.childTrace.steps.map((step) => ({ ...step, running: false }))
          result.childTrace = { ...result.childTrace, steps }
        }
        return result
      })
    case 'tool-call-suspended': {
      const { payload } = event
      const suspended = tool(turn, payload.toolCallId, payload.toolName, (part) => ({
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
    case 'execution-started':
    case 'message-queued':
    case 'start-step':
    case 'finish-step':
    case 'text-end':
    case 'tool-input-delta':
    case 'warning':
      // execution-started opens the turn (startTurn); message-queued comes before it (its
      // POST's acceptance, `ownTurn.ts`); the others change no part.
      return turn
  }
}

/**
 * Applies a batch of events in order, stopping at a terminal one. Consecutive deltas of one stream
 * are joined first (`deltaJoin`, the one join), so a network chunk of hundreds of deltas copies the
 * message once.
 */
export function applyTurnEvents(
  turn: LiveTurn,
  events: readonly TurnEvent[],
  options: TurnOptions,
): LiveTurn {
  let current = turn
  const deltas = deltaJoin((joined) => (current = applyTurnEvent(current, joined, options)))
  for (const event of events) {
    if (current.ended) break
    if (event.type === 'text-delta' || event.type === 'reasoning-delta') {
      deltas.add(event)
      continue
    }
    deltas.flush()
    current = applyTurnEvent(current, event, options)
  }
  deltas.flush()
  return current
}

/**
 * The parts as the server records them: what only the client derives (`truncated`, which the
 * client sets again on every read with `markTruncated`) left out.
 */
export function recordedParts(parts: readonly MessagePart[]): MessagePart[] {
  return parts.map((part) => {
    if (part.type !== 'tool-call' || part.childTrace?.truncated === undefined) return part
    const { truncated: _derived, ...childTrace } = part.childTrace
    return { ...part, childTrace }
  })
}

/** The turn's messages in transcript order. */
export function turnMessages(turn: LiveTurn): Message[] {
  return turn.user ? [turn.user, turn.assistant] : [turn.assistant]
}

/** Characters of child text and reasoning in a trace. */
export function childTraceChars(trace: ChildTrace): number {
  return trace.reasoningSegments.reduce(
    (sum, segment) => sum + segment.content.length,
    trace.text.length,
  )
}

function reasoningPart(options: TurnOptions): MessagePart {
  return { type: 'reasoning', text: '', startTime: options.now() }
}

function errorText(output: unknown): string {
  if (typeof output === 'string') return output
  try {
    return JSON.stringify(output) ?? 'The tool failed.'
  } catch {
    return 'The tool failed.'
  }
}

function withContent(turn: LiveTurn, content: MessagePart[], streams = turn.streams): LiveTurn {
  return { ...turn, streams, assistant: { ...turn.assistant, content } }
}

/** The turn with stream `key` open: as it is, or with a new part from `create` at the end. */
function opened(turn: LiveTurn, key: string, create: () => MessagePart): LiveTurn {
  if (byId(turn.streams, key) !== undefined) return turn
  const content = [...turn.assistant.content, create()]
  return withContent(turn, content, withId(turn.streams, key, content.length - 1))
}

function update(turn: LiveTurn, key: string, change: (part: MessagePart) => MessagePart): LiveTurn {
  const index = byId(turn.streams, key)
  const part = index === undefined ? undefined : turn.assistant.content[index]
  if (index === undefined || part === undefined) return turn
  const content = turn.assistant.content.slice()
  content[index] = change(part)
  return withContent(turn, content)
}

/** Changes the tool call's part, opening it first (with the resumed call's name and input). */
function tool(
  turn: LiveTurn,
  toolCallId: string,
  toolName: string,
  change: (part: ToolCallPart) => ToolCallPart,
): LiveTurn {
  const key = `tool:${toolCallId}`
  const withPart = opened(turn, key, () => {
    const resumed = turn.resumes?.toolCallId === toolCallId ? turn.resumes : null
    return resumed
      ? { type: 'tool-call', toolName: resumed.toolName, toolCallId, input: resumed.input }
      : { type: 'tool-call', toolName, toolCallId }
  })
  return update(withPart, key, (part) => (part.type === 'tool-call' ? change(part) : part))
}

/** The turn's end on both of its messages: their status and error are the execution's. */
function end(turn: LiveTurn, status: 'success' | 'error', executionError?: string): LiveTurn {
  const ended = (message: Message): Message => ({
    ...message,
    executionStatus: status,
    ...(executionError !== undefined && { executionError }),
  })
  return {
    ...turn,
    ended: true,
    assistant: ended(turn.assistant),
    user: turn.user && ended(turn.user),
  }
}

/**
 * A delegation's child output. Text and reasoning share one budget per delegation (spec: "Child
 * text and reasoning share the existing 4,000-character limit for each delegation. Text beyond
 * that limit is not part of recovery."); a delta that crosses the limit is cut at it.
 */
function applyChildChunk(
  turn: LiveTurn,
  parentToolCallId: string,
  chunk: SubagentChunk,
  options: TurnOptions,
): LiveTurn {
  const state = byId(turn.delegations, parentToolCallId) ?? { used: 0, openSegment: null }
  let { used, openSegment } = state
  const budgeted = (delta: string) => {
    const kept = delta.slice(0, Math.max(0, options.delegationCharLimit - used))
    used += kept.length
    return kept
  }
  const openSegmentIn = (trace: ChildTrace): ChildTrace => {
    openSegment = trace.reasoningSegments.length
    const segment = { id: `segment-${openSegment + 1}`, content: '', startTime: options.now() }
    return { ...trace, reasoningSegments: [...trace.reasoningSegments, segment] }
  }
  const changeSegment = (trace: ChildTrace, change: (content: string) => object) => {
    const segments = trace.reasoningSegments.slice()
    const segment = openSegment === null ? undefined : segments[openSegment]
    if (openSegment === null || !segment) return trace
    segments[openSegment] = { ...segment, ...change(segment.content) }
    return { ...trace, reasoningSegments: segments }
  }
  const changeTrace = (trace: ChildTrace): ChildTrace => {
    switch (chunk.type) {
      case 'text-delta':
        return { ...trace, text: trace.text + budgeted(chunk.delta) }
      case 'reasoning-start':
        return openSegmentIn(trace)
      case 'reasoning-delta': {
        const withSegment = openSegment === null ? openSegmentIn(trace) : trace
        const delta = budgeted(chunk.delta)
        return changeSegment(withSegment, (content) => ({ content: content + delta }))
      }
      case 'reasoning-end': {
        const closed = changeSegment(trace, () => ({ endTime: options.now() }))
        openSegment = null
        return closed
      }
      case 'tool-input-start':
      case 'tool-execution-start':
      case 'tool-execution-end': {
        // The latest event names the step (a step may be renamed once its input is known).
        const running = chunk.type !== 'tool-execution-end'
        const step = { toolCallId: chunk.toolCallId, toolName: chunk.toolName, running }
        const at = trace.steps.findIndex((existing) => existing.toolCallId === chunk.toolCallId)
        const steps = trace.steps.slice()
        if (at === -1) steps.push(step)
        else steps[at] = step
        return { ...trace, steps }
      }
    }
  }
  const changed = tool(turn, parentToolCallId, 'delegate', (part) => {
    const trace = changeTrace(part.childTrace ?? { text: '', reasoningSegments: [], steps: [] })
    // A copy: `changeTrace` may give back the part's own trace, which earlier states hold.
    return {
      ...part,
      childTrace: used >= options.delegationCharLimit ? { ...trace, truncated: true } : trace,
    }
  })
  return {
    ...changed,
    delegations: withId(changed.delegations, parentToolCallId, { used, openSegment }),
  }
}
