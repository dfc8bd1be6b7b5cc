import { PreviewChatError } from './errors'
import { explain } from './explain'
import { isRecord, parseJson, validate } from './result'
import { literal, object, string, type Schema } from './schema'

/** Identifies one execution of one thread. */
export interface ExecutionRef {
  projectId: string
  agentId: string
  threadId: string
  executionId: string
}

/**
 * Sent to each of the user's connections each time a snapshot of one of the user's executions is
 * recorded, and when it ends. It carries no transcript: answer it with a history read.
 */
export interface AgentExecutionUpdatedMessage {
  type: 'agentExecutionUpdated'
  data: ExecutionRef
}

export type PushMessage = AgentExecutionUpdatedMessage

export const pushSchema = object({
  type: literal('agentExecutionUpdated'),
  data: object({
    projectId: string,
    agentId: string,
    threadId: string,
    executionId: string,
  }),
}) satisfies Schema<PushMessage>

export type PushMessageParseResult =
  | { kind: 'message'; message: PushMessage }
  /** Another type of push message (the push channel carries more than this feature's). */
  | { kind: 'ignored'; type: string }
  | { kind: 'invalid'; error: PreviewChatError }

/** Turns one push frame (WebSocket text or SSE `data:`) into a typed message. Never throws. */
export function parsePushMessage(data: string): PushMessageParseResult {
  const json = parseJson(data, 'A push message')
  return json.success ? readPushMessage(json.value) : { kind: 'invalid', error: json.error }
}

/**
 * Checks a value as a push message: a parsed frame, or what an app's own `PushSource` hands
 * over (which is parsed like the wire, never trusted). Never throws.
 */
export function readPushMessage(raw: unknown): PushMessageParseResult {
  // What this parser gave already (a built-in channel's frame) is not checked twice.
  if (read.has(raw as object)) return { kind: 'message', message: raw as PushMessage }
  if (!isRecord(raw) || typeof raw.type !== 'string') {
    return {
      kind: 'invalid',
      error: new PreviewChatError(
        'invalid_response',
        `A push message has no string "type".${explain('not-the-contract')}`,
      ),
    }
  }
  if (raw.type !== 'agentExecutionUpdated') return { kind: 'ignored', type: raw.type }
  const result = validate(pushSchema, raw, 'An agentExecutionUpdated push message')
  if (!result.success) return { kind: 'invalid', error: result.error }
  read.add(result.value)
  return { kind: 'message', message: result.value }
}

/** The messages `readPushMessage` gave. */
const read = new WeakSet<object>()

/**
 * The platform's unreleased queue push (next-era.md): a thread's queue changed. It carries no
 * contents: answer it with a queue read. Not part of `PushMessage` (what every server sends);
 * `readPushMessage` reports it `ignored`, and a client that knows the queue reads it again with
 * `readQueuePushMessage`.
 */
export interface AgentMessageQueueUpdatedMessage {
  type: 'agentMessageQueueUpdated'
  data: { projectId: string; agentId: string; threadId: string }
}

/** Every push message the reference server sends. */
export type ServerPushMessage = PushMessage | AgentMessageQueueUpdatedMessage

// Built on first use: a client that never reads the queue push does not bundle its schema.
let queuePushSchema: Schema<AgentMessageQueueUpdatedMessage> | undefined
const queuePush = () =>
  (queuePushSchema ??= object({
    type: literal('agentMessageQueueUpdated'),
    data: object({ projectId: string, agentId: string, threadId: string }),
  }))

export type QueuePushMessageParseResult =
  | { kind: 'message'; message: AgentMessageQueueUpdatedMessage }
  | { kind: 'ignored'; type: string }
  | { kind: 'invalid'; error: PreviewChatError }

/** Checks a value (a parsed frame, or an app's own source's) as an `agentMessageQueueUpdated`. */
export function readQueuePushMessage(raw: unknown): QueuePushMessageParseResult {
  const type = isRecord(raw) ? raw.type : undefined
  if (type !== 'agentMessageQueueUpdated') {
    return { kind: 'ignored', type: typeof type === 'string' ? type : '' }
  }
  const result = validate(queuePush(), raw, 'An agentMessageQueueUpdated push message')
  return result.success
    ? { kind: 'message', message: result.value }
    : { kind: 'invalid', error: result.error }
}

/** `readQueuePushMessage` of one push frame's text. Never throws. */
export function parseQueuePushMessage(data: string): QueuePushMessageParseResult {
  const json = parseJson(data, 'A push message')
  return json.success ? readQueuePushMessage(json.value) : { kind: 'invalid', error: json.error }
}
