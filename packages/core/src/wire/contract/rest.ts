import { PreviewChatError, type PreviewChatErrorCode } from './errors'
import { unwrapEnvelope, validate, type ParseResult } from './result'
import { boolean, numberOrString, object, optional, string } from './schema'
import { explain, type MessageId } from './explain'

/** Answer of `DELETE .../executions/:executionId`: the request was accepted, not that the turn ended. */
export interface StopAnswer {
  cancelRequested: boolean
}

/** Answer of `DELETE .../chat/runs/:runId`, the checkpoint cancellation path of a suspended turn. */
export interface RunCancelAnswer {
  cancelled: boolean
}

/**
 * A REST error body: `{ code, message, hint? }` with the HTTP status. `code` is a string on the
 * reference server, a number on n8n, and absent from n8n's 401 (`{ status: "error", message }`).
 */
export interface RestErrorBody {
  code?: number | string
  message: string
  hint?: string
}

const stopAnswerSchema = object({ cancelRequested: boolean })
const runCancelAnswerSchema = object({ cancelled: boolean })
const restErrorSchema = object({
  code: optional(numberOrString),
  message: string,
  hint: optional(string),
})

export function parseStopAnswer(body: unknown): ParseResult<StopAnswer> {
  return validate(stopAnswerSchema, unwrapEnvelope(body), 'The Stop answer')
}

export function parseRunCancelAnswer(body: unknown): ParseResult<RunCancelAnswer> {
  return validate(runCancelAnswerSchema, unwrapEnvelope(body), 'The run cancellation answer')
}

export function parseRestError(body: unknown): ParseResult<RestErrorBody> {
  return validate(restErrorSchema, body, 'The error body')
}

/** The codes of an HTTP answer that is not a success (each has its docs entry, by its name). */
type HttpErrorCode = PreviewChatErrorCode & MessageId

const statusCodes: Record<number, HttpErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
}

/** The error code for an HTTP status that is not a success. */
export function errorCodeForStatus(status: number): HttpErrorCode {
  return statusCodes[status] ?? (status >= 500 ? 'server_error' : 'http_error')
}

/**
 * Builds the typed error for a REST answer that is not a success, from its status and its body
 * (`{ code, message, hint? }` when the server sent one; anything else is tolerated).
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  what: string,
  retryAfterMs?: number,
): PreviewChatError {
  const code = errorCodeForStatus(status)
  const parsed = parseRestError(body)
  const detail = parsed.success ? parsed.value : undefined
  // A page instead of the API's JSON: a route the server does not have, or a proxy's answer.
  const page = !detail && typeof body === 'string' && /^\s*</.test(body)
  const message = `${what} failed with HTTP ${status}${detail ? `: ${detail.message.replace(/\.+$/, '')}` : ''}.${page ? ` The server answered with an HTML page, not the API.${explain('html-page')}` : explain(code)}`
  return new PreviewChatError(code, message, {
    status,
    retryAfterMs,
    serverCode: detail?.code,
    hint: detail?.hint,
    // A page, or the reference server's word for a path it does not have.
    routeMissing: page || detail?.code === 'route_not_found',
  })
}

/**
 * The wait a `Retry-After` header asks for, in ms (RFC 9110 §10.2.3: a number of seconds or an
 * HTTP date); `undefined` when absent or unreadable. An HTTP date is counted from the response's
 * own `Date` header (`date`), both of the server's clock, never from this machine's: a client clock
 * an hour off would otherwise wait an hour, or not at all. Without a readable `Date` it is
 * `undefined`, and the client's own backoff applies.
 */
export function parseRetryAfter(value: string | null, date: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000
  const wait = Date.parse(value) - Date.parse(date ?? '')
  return Number.isNaN(wait) ? undefined : Math.max(0, wait)
}
