import {
  readPushMessage,
  readQueuePushMessage,
  type ServerPushMessage,
} from '@preview-chat/core/contract'

/**
 * The messages instances exchange over Redis, each JSON with the protocol version `v`. Whatever
 * arrives on a channel is parsed with `parseEnvelope` (another instance, an older version or
 * anyone with access to Redis may have written it): junk never reaches the server.
 */
export type Envelope =
  /** A user's push message, published by instance `from` (which delivered it locally already). */
  | { v: 1; kind: 'push'; from: string; userId: string; message: ServerPushMessage }
  /** A Stop for main `mainId`'s execution; the answer goes to instance `replyTo`, naming `id`. */
  | { v: 1; kind: 'stop'; id: string; mainId: string; executionId: string; replyTo: string }
  /**
   * Every instance that hears a Stop answers it: `owner` when it has a handler for the main,
   * `accepted` what that handler said (false from the others).
   */
  | { v: 1; kind: 'answer'; id: string; owner: boolean; accepted: boolean }

export const ENVELOPE_VERSION = 1

/** Bigger than any message the bus sends; anything longer is junk, not parsed. */
export const MAX_ENVELOPE_CHARS = 64 * 1024
/** Ids (users, mains, executions, correlation ids) are short: longer ones are junk. */
const MAX_ID_CHARS = 512

export type EnvelopeParseResult = { ok: true; envelope: Envelope } | { ok: false; reason: string }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const isId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS

/** A push message, parsed by core's parsers (the same ones the client uses on the wire). */
function readServerPush(raw: unknown): ServerPushMessage | undefined {
  const push = readPushMessage(raw)
  if (push.kind === 'message') return push.message
  const queue = readQueuePushMessage(raw)
  return queue.kind === 'message' ? queue.message : undefined
}

const junk = (reason: string): EnvelopeParseResult => ({ ok: false, reason })

function readFields(raw: Record<string, unknown>): EnvelopeParseResult {
  switch (raw.kind) {
    case 'push': {
      const message = readServerPush(raw.message)
      if (!isId(raw.from) || !isId(raw.userId)) return junk('a push without "from" or "userId"')
      if (!message) return junk('a push whose message is no push message')
      return {
        ok: true,
        envelope: { v: 1, kind: 'push', from: raw.from, userId: raw.userId, message },
      }
    }
    case 'stop': {
      const { id, mainId, executionId, replyTo } = raw
      if (!isId(id) || !isId(mainId) || !isId(executionId) || !isId(replyTo)) {
        return junk('a stop without "id", "mainId", "executionId" or "replyTo"')
      }
      return { ok: true, envelope: { v: 1, kind: 'stop', id, mainId, executionId, replyTo } }
    }
    case 'answer': {
      const { id, owner, accepted } = raw
      if (!isId(id) || typeof owner !== 'boolean' || typeof accepted !== 'boolean') {
        return junk('an answer without "id" or a boolean "owner" and "accepted"')
      }
      return { ok: true, envelope: { v: 1, kind: 'answer', id, owner, accepted } }
    }
    default:
      return junk('an unknown "kind"')
  }
}

/** Parses one message read from a channel. Never throws. */
export function parseEnvelope(text: string): EnvelopeParseResult {
  if (text.length > MAX_ENVELOPE_CHARS) return junk(`longer than ${MAX_ENVELOPE_CHARS} characters`)
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return junk('not JSON')
  }
  if (!isRecord(raw)) return junk('not a JSON object')
  if (raw.v !== ENVELOPE_VERSION) return junk(`not version ${ENVELOPE_VERSION}`)
  return readFields(raw)
}

/** The text of an envelope, as published. */
export const encodeEnvelope = (envelope: Envelope): string => JSON.stringify(envelope)
