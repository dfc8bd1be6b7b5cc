/**
 * The bodies of the turn POSTs, and their validation on the server's side (the reference server
 * checks what a client sent with these; the client only builds them).
 */
import { pathSegmentIdProblem } from './ids'
import { validate, type ParseResult } from './result'
import { check, literal, object, optional, string, unknown, type Schema } from './schema'

/** Body of `POST .../chat`. `sessionId` is the thread id; send `newSession: true` with a new thread's first message. */
export interface ChatRequestBody {
  message: string
  sessionId?: string
  newSession?: true
  /**
   * The client's id of this message (a UUID; needs `sessionId`). A server that dedupes
   * (`capabilities.ts`: `message-dedupe`) answers a second POST of it with a bare `done`.
   */
  messageId?: string
}

/** Body of `POST .../chat/resume`. */
export interface ResumeRequestBody {
  runId: string
  toolCallId: string
  resumeData: unknown
}

/** What a turn POST sends: a new message, or the answer to a suspension. */
export type TurnRequest =
  { kind: 'message'; body: ChatRequestBody } | { kind: 'resume'; body: ResumeRequestBody }

const nonBlank = check(string, (text) => text.trim().length > 0, 'must have non-blank text')
const nonEmpty = check(string, (text) => text.length > 0, 'must not be empty')
/** An id that travels as one URL path segment (not empty, not `.` or `..`). */
const pathId = check(
  string,
  (id) => pathSegmentIdProblem(id) === null,
  'must be an id a URL path segment can carry (not empty, ".", or "..")',
)

/** A UUID, any version, any case (RFC 9562's text form): what the platform's source asks of `messageId`. */
export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const uuid = check(string, (id) => uuidPattern.test(id), 'must be a UUID')

// "`messageId` must be a UUID and needs a `sessionId`" (next-era.md, "Client message ids").
const chatRequestSchema = check(
  object({
    message: nonBlank,
    sessionId: optional(pathId),
    newSession: optional(literal(true)),
    messageId: optional(uuid),
  }),
  (body) => body.messageId === undefined || body.sessionId !== undefined,
  'a messageId needs a sessionId (mint the thread id too)',
) satisfies Schema<ChatRequestBody>

const resumeRequestSchema = object({
  runId: pathId,
  toolCallId: nonEmpty,
  resumeData: unknown,
}) satisfies Schema<ResumeRequestBody>

/** Validates a chat request body (the server's side of `POST .../chat`). */
export function parseChatRequest(body: unknown): ParseResult<ChatRequestBody> {
  return validate(chatRequestSchema, body, 'The chat request body', 'bad_request')
}

/** Validates a resume request body (the server's side of `POST .../chat/resume`). */
export function parseResumeRequest(body: unknown): ParseResult<ResumeRequestBody> {
  return validate(resumeRequestSchema, body, 'The resume request body', 'bad_request')
}
