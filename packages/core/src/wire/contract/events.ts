import { describeValue, PreviewChatError } from './errors'
import { isRecord, parseJson, validate } from './result'
import {
  boolean,
  hasOwn,
  object,
  optional,
  string,
  timestamp,
  typed,
  unknown,
  variant,
  type Schema,
} from './schema'
import type { Timestamp } from './snapshot'
import { explain } from './explain'

/** First event of an accepted turn, sent once the execution is recorded and cancellable. */
export interface ExecutionStartedEvent {
  type: 'execution-started'
  executionId: string
  sessionId: string
  /**
   * The messages this execution takes up (next-era platform): each one's client `messageId` where
   * it sent one, else the id the record gives it. Kept by `queueEventFrom` only (`queue.ts`):
   * `turnEventFrom` drops it, so that a client without the queue bundles nothing of it.
   */
  inputMessageIds?: string[]
}
/**
 * A message the server took into its own queue (the platform's next era, `next-era.md`): that is
 * its acceptance, and `execution-started` follows on the same stream once it is taken up (a
 * server may take it up at once). Not a turn's start: no execution exists yet.
 */
export interface MessageQueuedEvent {
  type: 'message-queued'
  /** The queue item's id: a numeric string. */
  queueId: string
  sessionId: string
}
export interface StartStepEvent {
  type: 'start-step'
}
export interface FinishStepEvent {
  type: 'finish-step'
}
/** Text-stream `id`s are live-only: snapshots do not carry them. */
export interface TextStartEvent {
  type: 'text-start'
  id: string
}
export interface TextDeltaEvent {
  type: 'text-delta'
  id: string
  delta: string
}
export interface TextEndEvent {
  type: 'text-end'
  id: string
}
export interface ReasoningStartEvent {
  type: 'reasoning-start'
  id: string
}
export interface ReasoningDeltaEvent {
  type: 'reasoning-delta'
  id: string
  delta: string
}
export interface ReasoningEndEvent {
  type: 'reasoning-end'
  id: string
}
export interface ToolInputStartEvent {
  type: 'tool-input-start'
  toolCallId: string
  toolName: string
}
export interface ToolInputDeltaEvent {
  type: 'tool-input-delta'
  toolCallId: string
  delta: string
}
export interface ToolCallEvent {
  type: 'tool-call'
  toolCallId: string
  toolName: string
  input: unknown
}
export interface ToolExecutionStartEvent {
  type: 'tool-execution-start'
  toolCallId: string
  toolName: string
  startTime: Timestamp
}
export interface ToolExecutionEndEvent {
  type: 'tool-execution-end'
  toolCallId: string
  toolName: string
  isError: boolean
  endTime: Timestamp
}
export interface ToolResultEvent {
  type: 'tool-result'
  toolCallId: string
  toolName: string
  output: unknown
  isError?: boolean
  canceled?: boolean
}
export interface SuspendedPayload {
  toolCallId: string
  runId: string
  toolName: string
  input: unknown
}
/** The turn pauses for a person; no `done` follows. */
export interface ToolCallSuspendedEvent {
  type: 'tool-call-suspended'
  payload: SuspendedPayload
}

/** What a delegated child agent streams, inside a `subagent-chunk`. */
export type SubagentChunk =
  | { type: 'text-delta'; delta: string }
  | { type: 'reasoning-start' }
  | { type: 'reasoning-delta'; delta: string }
  | { type: 'reasoning-end' }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-execution-start'; toolCallId: string; toolName: string; startTime: Timestamp }
  | {
      type: 'tool-execution-end'
      toolCallId: string
      toolName: string
      isError: boolean
      endTime: Timestamp
    }

export interface SubagentChunkEvent {
  type: 'subagent-chunk'
  /** The delegation's tool call in the parent turn. */
  parentToolCallId: string
  taskPath: string
  chunk: SubagentChunk
}
export interface WarningEvent {
  type: 'warning'
  message: string
  code?: string
}
/** An in-band failure; ends the turn. `errorCode` is e.g. `turn_already_running`. */
export interface ErrorEvent {
  type: 'error'
  message: string
  errorCode?: string
}
export interface DoneEvent {
  type: 'done'
  sessionId?: string
  executionId?: string
}

/** One `data:` block of a turn stream, discriminated by `type`. */
export type TurnEvent =
  | ExecutionStartedEvent
  | MessageQueuedEvent
  | StartStepEvent
  | FinishStepEvent
  | TextStartEvent
  | TextDeltaEvent
  | TextEndEvent
  | ReasoningStartEvent
  | ReasoningDeltaEvent
  | ReasoningEndEvent
  | ToolInputStartEvent
  | ToolInputDeltaEvent
  | ToolCallEvent
  | ToolExecutionStartEvent
  | ToolExecutionEndEvent
  | ToolResultEvent
  | ToolCallSuspendedEvent
  | SubagentChunkEvent
  | WarningEvent
  | ErrorEvent
  | DoneEvent

export type TurnEventType = TurnEvent['type']

/** The events that end a turn; a stream that closes without one of them was cut. */
export type TerminalTurnEvent = ToolCallSuspendedEvent | ErrorEvent | DoneEvent

export function isTerminalEvent(event: TurnEvent): event is TerminalTurnEvent {
  return event.type === 'done' || event.type === 'error' || event.type === 'tool-call-suspended'
}

const str = string
const id = { id: str }
const delta = { delta: str }
const toolStart = { toolCallId: str, toolName: str }
const executionStart = { ...toolStart, startTime: timestamp }
const executionEnd = { ...toolStart, isError: boolean, endTime: timestamp }

const chunkSchemas = typed({
  'text-delta': delta,
  'reasoning-start': {},
  'reasoning-delta': delta,
  'reasoning-end': {},
  'tool-input-start': toolStart,
  'tool-execution-start': executionStart,
  'tool-execution-end': executionEnd,
}) satisfies {
  [K in SubagentChunk['type']]: Schema<Extract<SubagentChunk, { type: K }>>
}

const eventSchemas = typed({
  'execution-started': { executionId: str, sessionId: str },
  'message-queued': { queueId: str, sessionId: str },
  'start-step': {},
  'finish-step': {},
  'text-start': id,
  'text-end': id,
  'text-delta': { ...id, ...delta },
  'reasoning-start': id,
  'reasoning-end': id,
  'reasoning-delta': { ...id, ...delta },
  'tool-input-start': toolStart,
  'tool-input-delta': { toolCallId: str, ...delta },
  'tool-call': { ...toolStart, input: unknown },
  'tool-execution-start': executionStart,
  'tool-execution-end': executionEnd,
  'tool-result': {
    ...toolStart,
    output: unknown,
    isError: optional(boolean),
    canceled: optional(boolean),
  },
  'tool-call-suspended': { payload: object({ ...toolStart, runId: str, input: unknown }) },
  'subagent-chunk': { parentToolCallId: str, taskPath: str, chunk: variant(chunkSchemas) },
  warning: { message: str, code: optional(str) },
  error: { message: str, errorCode: optional(str) },
  done: { sessionId: optional(str), executionId: optional(str) },
}) satisfies { [K in TurnEventType]: Schema<Extract<TurnEvent, { type: K }>> }

/** The outcome of reading one `data:` block of a turn stream. */
export type TurnEventParseResult =
  | { kind: 'event'; event: TurnEvent }
  /** A type (or child chunk type) this client does not know: tolerated for forward compatibility. */
  | { kind: 'ignored'; type: string }
  | { kind: 'invalid'; error: PreviewChatError }

/** Turns the text of one SSE `data:` block into a typed turn event. Never throws. */
export function parseTurnEvent(data: string): TurnEventParseResult {
  const json = parseJson(data, 'A turn stream event')
  return json.success ? turnEventFrom(json.value) : { kind: 'invalid', error: json.error }
}

/**
 * A text or reasoning delta, checked in place: the whole of its schema. The hot path of a turn
 * stream (readTurnStream) reads deltas through this and nothing else.
 */
export function isDeltaEvent(
  raw: unknown,
): raw is { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string } {
  if (!isRecord(raw)) return false
  const type = raw.type
  return (
    (type === 'text-delta' || type === 'reasoning-delta') &&
    typeof raw.id === 'string' &&
    typeof raw.delta === 'string'
  )
}

/**
 * A delta in the form the servers write it (the reference server and n8n alike):
 * `{"type":"text-delta","id":"…","delta":"…"}` (or `reasoning-delta`), read in place: its strings
 * taken from the text with no object made for the event, a `JSON.parse` only for a delta with
 * escapes. Anything else — another order, spaces, more fields, an id with escapes, a string JSON
 * would refuse — is `undefined`, and goes the general way (`JSON.parse`, `isDeltaEvent`, the
 * event parsers), so this reads exactly what they would, only sooner. The hot path of a turn
 * stream: most of its events are deltas.
 */
export function readDeltaEvent(data: string): DeltaEvent | undefined {
  const match = deltaForm.exec(data)
  if (!match) return undefined
  const [, type, id, literal] = match as unknown as [string, DeltaEvent['type'], string, string]
  if (!literal.includes('\\')) return { type, id, delta: literal.slice(1, -1) }
  // Escapes: JSON decides what they mean, and refuses one it does not know.
  try {
    return { type, id, delta: JSON.parse(literal) as string }
  } catch {
    return undefined
  }
}

/**
 * The servers' form of a delta: the type, an id with nothing to escape, and a JSON string (its
 * characters plain, or escaped by a backslash) — no control character anywhere, as JSON wants.
 */
const deltaForm =
  // eslint-disable-next-line no-control-regex -- JSON refuses control characters in a string, and so does the form
  /^\{"type":"(text-delta|reasoning-delta)","id":"([^"\\\x00-\x1f]*)","delta":("(?:[^"\\\x00-\x1f]|\\.)*")\}$/

/** A text or reasoning delta event. */
export type DeltaEvent = Extract<TurnEvent, { type: 'text-delta' | 'reasoning-delta' }>

/**
 * The one delta join: runs of consecutive deltas of one stream (`type` and `id`) become one event
 * each, what the fold makes of them anyway, so that a network chunk of hundreds of deltas copies
 * the message once. `add` takes a delta; `flush` emits the run so far (before any other event, and
 * at the end). The pieces are joined once into a flat string: a `+=` per delta would keep a node
 * per delta alive in the answer's text, which the collector then walks for the rest of the turn.
 * The turn stream's reader (`readTurnStream`) and the fold (`applyTurnEvents`) both join with it.
 */
export function deltaJoin(emit: (event: DeltaEvent) => void) {
  let run: DeltaEvent | null = null
  const pieces: string[] = []
  const flush = () => {
    if (run) emit({ type: run.type, id: run.id, delta: pieces.join('') })
    pieces.length = 0
    run = null
  }
  return {
    add(event: DeltaEvent) {
      if (run && (run.type !== event.type || run.id !== event.id)) flush()
      run ??= event
      pieces.push(event.delta)
    },
    flush,
  }
}

/** `parseTurnEvent` for an already parsed JSON value. */
export function turnEventFrom(raw: unknown): TurnEventParseResult {
  if (!isRecord(raw) || typeof raw.type !== 'string') {
    return {
      kind: 'invalid',
      error: new PreviewChatError(
        'invalid_response',
        `A turn stream event has no string "type".${explain('no-event-type')}`,
      ),
    }
  }
  // Only the fields of the contract are kept: the schemas strip the rest.
  const type = raw.type
  if (!hasOwn(eventSchemas, type)) return { kind: 'ignored', type }
  if (type === 'subagent-chunk' && isRecord(raw.chunk) && !hasOwn(chunkSchemas, raw.chunk.type)) {
    return { kind: 'ignored', type: `subagent-chunk/${describeValue(raw.chunk.type)}` }
  }
  const schema: Schema<TurnEvent> = eventSchemas[type]
  const result = validate(schema, raw, `A "${type}" turn stream event`)
  return result.success
    ? { kind: 'event', event: result.value }
    : { kind: 'invalid', error: result.error }
}
