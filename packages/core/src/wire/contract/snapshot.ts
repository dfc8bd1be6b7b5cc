import { passReleased } from './errors'
import { contractError, isRecord, unwrapEnvelope, type ParseResult } from './result'
import {
  array,
  boolean,
  FAIL,
  hasOwn,
  literal,
  nullable,
  number,
  object,
  optional,
  picklist,
  run,
  string,
  timestamp,
  typed,
  unknown,
  variant,
  type Infer,
} from './schema'

/** A moment as the server sends it: epoch milliseconds or an ISO-8601 string. */
export type Timestamp = number | string

export type ExecutionStatus = 'running' | 'success' | 'error' | 'cancelled' | 'interrupted'

export interface TextPart {
  type: 'text'
  text: string
}

export interface ReasoningPart {
  type: 'reasoning'
  text: string
  startTime?: Timestamp
  endTime?: Timestamp
}

/** One reasoning block of a delegated child agent. */
export interface ReasoningSegment {
  id: string
  content: string
  startTime?: Timestamp
  endTime?: Timestamp
}

/** One tool call of a delegated child agent. */
export interface ChildStep {
  toolCallId: string
  toolName: string
  running: boolean
}

/**
 * What a delegation's child agent produced. Its `text` and reasoning `content` share one budget
 * (4,000 characters per delegation by default); what goes beyond it is not recorded.
 */
export interface ChildTrace {
  text: string
  reasoningSegments: ReasoningSegment[]
  steps: ChildStep[]
  /**
   * Set by the client, never sent by the server: the delegation used up its budget, so what its
   * child produced after that is not shown, live or recovered.
   */
  truncated?: boolean
}

export interface ToolCallPart {
  type: 'tool-call'
  toolName: string
  toolCallId: string
  /** Absent while the model is still writing the call's input. */
  input?: unknown
  state?: 'resolved' | 'rejected'
  output?: unknown
  error?: string
  startTime?: Timestamp
  endTime?: Timestamp
  /** Present while the call waits for a person (a suspension). */
  suspendPayload?: unknown
  /** Present on delegations. */
  childTrace?: ChildTrace
}

export interface FilePart {
  type: 'file'
  fileId: string
  fileName: string
  mimeType: string
  sizeBytes: number
}

export type MessagePart = TextPart | ReasoningPart | ToolCallPart | FilePart

/**
 * One recorded message. One execution is one turn: a user message `${executionId}:user` and an
 * assistant message `${executionId}:assistant`.
 */
export interface Message {
  id: string
  role: 'user' | 'assistant'
  content: MessagePart[]
  executionId: string
  executionStatus: ExecutionStatus
  executionError?: string
  /** ISO-8601. */
  createdAt: string
  /**
   * The client's `messageId` of a user message, where the client sent one and the server keeps
   * it (the reference server's spec and next-era flavors): a lost POST's fate, read from history.
   */
  messageId?: string
}

/** A tool call that waits for a person; resume it with its `runId` and `toolCallId`. */
export interface Suspension {
  toolCallId: string
  runId: string
  suspendPayload?: unknown
}

/** The answer of `GET .../chat/:threadId/messages`: the latest retained timeline of a thread. */
export interface HistorySnapshot {
  messages: Message[]
  openSuspensions: Suspension[]
  /** Set from the moment an execution is recorded, before any output; `null` when none runs. */
  activeExecutionId: string | null
  /**
   * Set by the client, never sent: the server sent no `activeExecutionId` nor the user messages'
   * `executionStatus` (the released n8n 2.41), so the client derived them from the messages.
   */
  derived?: true
}

const str = string
const toolCall = { toolCallId: str, toolName: str }
const times = { startTime: optional(timestamp), endTime: optional(timestamp) }

const childTrace = object({
  text: str,
  reasoningSegments: array(object({ id: str, content: str, ...times })),
  steps: array(object({ ...toolCall, running: boolean })),
})

const partSchemas = typed({
  text: { text: str },
  reasoning: { text: str, ...times },
  'tool-call': {
    toolName: str,
    toolCallId: str,
    input: optional(unknown),
    state: optional(picklist(['resolved', 'rejected'])),
    output: optional(unknown),
    error: optional(str),
    ...times,
    suspendPayload: optional(unknown),
    childTrace: optional(childTrace),
  },
  file: { fileId: str, fileName: str, mimeType: str, sizeBytes: number },
})

// Forward compatibility: a part type this client does not know yet is dropped, not fatal.
const isKnownPart = (part: unknown) => !isRecord(part) || hasOwn(partSchemas, part.type)

/** One recorded message (also what the tab relay checks a relayed turn's messages with). */
export const messageSchema = object({
  id: string,
  role: picklist(['user', 'assistant']),
  content: array(variant(partSchemas), isKnownPart),
  executionId: string,
  // Optional on the wire: the released n8n 2.41 sends none on user messages (derived below).
  executionStatus: optional(picklist(['running', 'success', 'error', 'cancelled', 'interrupted'])),
  executionError: optional(string),
  createdAt: string,
  messageId: optional(string),
})

const suspensionSchema = object({
  toolCallId: string,
  runId: string,
  suspendPayload: optional(unknown),
})

/** The snapshot around its messages, which are validated one by one (see `SnapshotReuse`). */
const shellSchema = object({
  messages: array(unknown),
  openSuspensions: array(suspensionSchema),
  // Optional on the wire: the released n8n 2.41 does not send it (derived below).
  activeExecutionId: optional(nullable(string)),
})

/** A snapshot as `completeSnapshot` leaves it: the active execution and every message's status. */
/** A complete snapshot (`HistorySnapshot`): what the engine keeps as `recorded`. */
export const completedSchema = object({
  messages: array<WireMessage>((input, issues, path) => {
    const message = messageSchema(input, issues, path)
    return message !== FAIL && message.executionStatus === undefined ? FAIL : message
  }),
  openSuspensions: array(suspensionSchema),
  activeExecutionId: nullable(string),
  derived: optional(literal(true)),
})

/** A recorded message as the wire may send it (the released n8n 2.41: a user message has no status). */
export type WireMessage = Infer<typeof messageSchema>
/**
 * A snapshot as the wire may send it, its messages validated: the spec's (complete), or one that
 * leaves out the active execution and the user messages' statuses (the released n8n 2.41), which
 * only a `CompleteSnapshot` turns into a `HistorySnapshot`.
 */
export interface WireSnapshot {
  messages: WireMessage[]
  openSuspensions: Suspension[]
  /** Absent from the released n8n 2.41's answers. */
  activeExecutionId?: string | null
}

/**
 * Fills in what a server left out of a snapshot: `releasedPlatform()`'s, for the released n8n
 * 2.41 (`wire/contract/released.ts`). Without one, such a snapshot is refused with an error that
 * says to pass it.
 */
export type CompleteSnapshot = (wire: WireSnapshot, reuse?: SnapshotReuse) => HistorySnapshot

/**
 * What one read of a thread leaves for the next, so that the next validates only what changed:
 * the messages as validated last time (shared with the snapshot it returned). A message of the
 * new answer that equals (as JSON) the one at its place last time is that validated message
 * again, same object and all, without being validated again: it passed the same schema already,
 * and the schema gives back what it was given (unknown fields and part types are dropped, so a
 * server that sends them gets every message validated, as before). Only a hint: any message not
 * found equal is validated in full.
 */
export interface SnapshotReuse {
  messages: readonly WireMessage[]
  /** The completed copies of messages whose status was derived (n8n 2.41), by message. */
  completed?: WeakMap<WireMessage, Message>
  /**
   * The transport's: the snapshot the last read gave, its body's text and ETag, for the next read
   * to ask conditionally (a 304 gives that snapshot back) or find the same body.
   */
  snapshot?: HistorySnapshot
  text?: string
  etag?: string | null
}

export function createSnapshotReuse(): SnapshotReuse {
  return { messages: [] }
}

/**
 * Turns the JSON body of a history read (wrapped in `{ data }` or bare) into a snapshot. With
 * `reuse` (the transport keeps one per thread), the messages the last read validated and that did
 * not change are taken as they are; every other message is validated. A snapshot that leaves out
 * the active execution or a message's status is completed by `complete` (the released n8n 2.41's,
 * `releasedPlatform()`), and refused without one.
 */
export function parseHistorySnapshot(
  body: unknown,
  reuse?: SnapshotReuse,
  complete?: CompleteSnapshot,
): ParseResult<HistorySnapshot> {
  const what = 'The history snapshot'
  const shell = run(shellSchema, unwrapEnvelope(body))
  if (shell.issues) return { success: false, error: contractError(shell.issues, what) }
  const raw = shell.value.messages
  const before = reuse?.messages ?? []
  let byId: Map<string, WireMessage> | null = null
  // Filled in order with push: a packed array (copied fast on every chunk of a stream).
  const messages: WireMessage[] = []
  const issues: string[] = []
  for (let i = 0; i < raw.length; i++) {
    const message = raw[i]
    // Where a thread only grows, a message stands where it stood; else it is looked up by id.
    const id = isRecord(message) ? message.id : undefined
    let known = before[i]
    if (known?.id !== id && before.length > 0 && typeof id === 'string') {
      byId ??= new Map(before.map((m) => [m.id, m]))
      known = byId.get(id)
    }
    if (known !== undefined && sameJson(message, known)) {
      messages.push(known)
      continue
    }
    // The message itself, where it has nothing the schema drops (no copy).
    const checked = messageSchema(message)
    if (checked !== FAIL) messages.push(checked)
    else messageSchema(message, issues, `messages.${i}`)
  }
  if (issues.length > 0) return { success: false, error: contractError(issues, what) }
  if (reuse) reuse.messages = messages
  const wire: WireSnapshot = { ...shell.value, messages }
  const full =
    wire.activeExecutionId !== undefined &&
    messages.every((message) => message.executionStatus !== undefined)
  let value = wire as HistorySnapshot
  if (!full) {
    if (!complete) return { success: false, error: incomplete(what) }
    value = complete(wire, reuse)
  }
  made.add(value)
  return { success: true, value }
}

/** The snapshots this client parsed (and completed): what `checkSnapshot` takes as they are. */
const made = new WeakSet<object>()

/**
 * A snapshot found in the query cache, checked before a session takes it. What this client's reads
 * put there passes at the cost of one lookup (a snapshot TanStack Query's structural sharing merged
 * from two of ours, at a check per message that copies nothing); what else got there (an app's
 * `setQueryData`, `hydrate`, a persister restoring what another version wrote) is parsed like a
 * read's answer.
 */
export function checkSnapshot(
  value: unknown,
  complete?: CompleteSnapshot,
): ParseResult<HistorySnapshot> {
  // One this client's read made, as the read gave it (a query's data is not changed in place).
  if (made.has(value as object)) return { success: true, value: value as HistorySnapshot }
  // A snapshot as this client completes it, given back itself unless the schema drops something.
  const checked = completedSchema(value)
  return checked === FAIL
    ? parseHistorySnapshot(value, undefined, complete)
    : { success: true, value: checked as HistorySnapshot }
}

/** Deep equality of JSON values (what `JSON.parse` makes, and the schema's output of it). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  let keys = 0
  for (const key in x) {
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false
    keys++
  }
  for (const _key in y) keys--
  return keys === 0
}

/** A snapshot without the spec's `activeExecutionId` or statuses, met by a client that cannot complete it. */
const incomplete = (what: string) =>
  contractError(
    [`no activeExecutionId or executionStatus (the released n8n 2.41): ${passReleased}`],
    what,
  )
