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

const chatRequestSchema = object({
  message: nonBlank,
  sessionId: optional(pathId),
  newSession: optional(literal(true)),
}) satisfies Schema<ChatRequestBody>

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
