import { explain } from './explain'

/**
 * What went wrong, as a string union so that a `switch` over it is exhaustive.
 *
 * - `bad_request`, `unauthorized`, `forbidden`, `not_found`, `conflict`, `payload_too_large`,
 *   `server_error`, `http_error`: the server answered with that HTTP status (400, 401, 403, 404, 409,
 *   413, 5xx, anything else). Another user's thread is reported as `not_found`, never `forbidden`.
 * - `network_error`: the request never got an answer (offline, DNS, connection reset).
 * - `timeout`: the request got no answer in time.
 * - `invalid_response`: bytes from the server did not match the wire contract.
 * - `invalid_request`: the request was refused before it was sent (e.g. a blank message).
 * - `stream_cut`: a turn stream closed without `done`, `tool-call-suspended` or `error`.
 * - `turn_already_running`: the thread already runs a turn; the draft is kept.
 * - `agent_error`: the turn ended with an in-band `error` event (see `serverCode`).
 * - `disposed`: the session was disposed while the operation was under way.
 * - `unsupported`: the server cannot do what was asked (e.g. Stop from a tab that does not hold
 *   the turn's stream, on a server without Stop by execution id).
 */
export type PreviewChatErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'server_error'
  | 'http_error'
  | 'network_error'
  | 'timeout'
  | 'invalid_response'
  | 'invalid_request'
  | 'stream_cut'
  | 'turn_already_running'
  | 'agent_error'
  | 'disposed'
  | 'unsupported'

export interface PreviewChatErrorOptions {
  /** The HTTP status, when the error is an HTTP answer. */
  status?: number
  /** The `code` of a REST error body, or the `errorCode` of an in-band `error` event. */
  serverCode?: string | number
  /** The `hint` of a REST error body. */
  hint?: string
  /** Where in the payload validation failed, as dot paths (`messages.0.role`). */
  issues?: readonly string[]
  /** How long the server asked to wait before trying again (`Retry-After`), in ms. */
  retryAfterMs?: number
  /** The answer was a page, not the API: the route does not exist there (or a proxy answered). */
  routeMissing?: boolean
  cause?: unknown
}

// Symbol.for: the same key across duplicated copies of this package in one page.
const brand = Symbol.for('@preview-chat/core/PreviewChatError')

/** The one error class of `@preview-chat/core`; branch on `code`. */
export class PreviewChatError extends Error {
  override readonly name = 'PreviewChatError'
  readonly code: PreviewChatErrorCode
  readonly status: number | undefined
  readonly serverCode: string | number | undefined
  readonly hint: string | undefined
  readonly issues: readonly string[]
  /** The server's `Retry-After`, in ms, when it sent one (429, 503). */
  readonly retryAfterMs: number | undefined
  /** The answer was an HTML page, not the API: a missing route, or a proxy's page. */
  readonly routeMissing: boolean

  constructor(code: PreviewChatErrorCode, message: string, options: PreviewChatErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.status = options.status
    this.serverCode = options.serverCode
    this.hint = options.hint
    this.issues = options.issues ?? []
    this.retryAfterMs = options.retryAfterMs
    this.routeMissing = options.routeMissing ?? false
    Object.defineProperty(this, brand, { value: true })
  }

  /**
   * `instanceof` that also recognises errors made by another copy of this package (two versions
   * bundled into one app), which a plain `instanceof` check would miss.
   */
  static isInstance(value: unknown): value is PreviewChatError {
    return typeof value === 'object' && value !== null && brand in value
  }
}

/**
 * A `PreviewChatError` as plain data: what the engine keeps in its state, actions and commands, so
 * that a step is JSON (a devtools trace can be exported, and replayed through `reduce`). The
 * `PreviewChatError` an app sees is made from it at the API edge (`fromErrorRecord`).
 */
export interface ErrorRecord {
  readonly code: PreviewChatErrorCode
  readonly message: string
  readonly status?: number
  readonly serverCode?: string | number
  readonly hint?: string
  readonly issues?: readonly string[]
  readonly retryAfterMs?: number
  readonly routeMissing?: boolean
}

/** What a message about the released n8n 2.41 tells a client without its part to do. */
export const passReleased = 'pass released: releasedPlatform() to the client'

/** A record of an error the engine itself finds (no cause: nothing failed outside it). */
export function errorRecord(
  code: PreviewChatErrorCode,
  message: string,
  options: Omit<ErrorRecord, 'code' | 'message'> = {},
): ErrorRecord {
  return { code, message, ...options }
}

// The error each record was made from (or first made into): an app that gets a record's error
// back gets the very instance it came from, `cause` and stack included. Keyed by identity, so
// it holds nothing a record does not.
const errorsOfRecords = new WeakMap<ErrorRecord, PreviewChatError>()

/** The record of `error`, to hand to the engine (an action's `error`). */
export function toErrorRecord(error: PreviewChatError): ErrorRecord {
  const { code, message, status, serverCode, hint, issues, retryAfterMs, routeMissing } = error
  // Through JSON: the fields an error does not have are left out, as a stored record has them.
  const record = JSON.parse(
    JSON.stringify({
      code,
      message,
      status,
      serverCode,
      hint,
      issues: issues.length > 0 ? issues : undefined,
      retryAfterMs,
      routeMissing: routeMissing || undefined,
    }),
  ) as ErrorRecord
  errorsOfRecords.set(record, error)
  return record
}

/** `toPreviewChatError`, as the record an effect hands to the engine. */
export function failureRecord(
  cause: unknown,
  code: PreviewChatErrorCode,
  what: string,
): ErrorRecord {
  return toErrorRecord(toPreviewChatError(cause, code, what))
}

/**
 * The `PreviewChatError` of a record, as the app sees it: the one it was made from, or (a record
 * the engine made, or one replayed from JSON) a new one, made once per record.
 */
export function fromErrorRecord(record: ErrorRecord): PreviewChatError {
  let error = errorsOfRecords.get(record)
  if (!error) {
    const { code, message, ...options } = record
    error = new PreviewChatError(code, message, options)
    errorsOfRecords.set(record, error)
  }
  return error
}

/** The error of an in-band `error` event of a turn stream. */
export function inBandError(event: {
  message: string
  errorCode?: string | undefined
}): ErrorRecord {
  const options = event.errorCode === undefined ? {} : { serverCode: event.errorCode }
  if (event.errorCode === 'turn_already_running') {
    return errorRecord(
      'turn_already_running',
      `${event.message}${explain('turn-running')}`,
      options,
    )
  }
  return errorRecord('agent_error', event.message, options)
}

/**
 * The error of an in-band `error` event that came first on a message's stream: the server refused
 * the message before any turn of it began, so nothing of it was recorded and the draft is kept.
 * Besides `turn_already_running` (its own words), the server's message says what failed, not what
 * to do: e.g. n8n 2.41's `SQLITE_CONSTRAINT` when another tab or device sent the first message of
 * the same new thread at the same moment.
 */
export function refusalError(event: {
  message: string
  errorCode?: string | undefined
}): ErrorRecord {
  const error = inBandError(event)
  if (error.code === 'turn_already_running') return error
  return {
    ...error,
    message: `${event.message}${explain('message-refused')}`,
  }
}

/**
 * The one way an unknown failure becomes a `PreviewChatError`: a `PreviewChatError` stays as it
 * is; anything else is wrapped with `code` and a message that starts with `what`.
 */
export function toPreviewChatError(
  cause: unknown,
  code: PreviewChatErrorCode,
  what: string,
): PreviewChatError {
  if (PreviewChatError.isInstance(cause)) return cause
  return new PreviewChatError(code, `${what} (${describeValue(cause)}).`, { cause })
}

/**
 * Any value as text for a message, never throwing: an object whose `toString` is not a function
 * (`{ toString: null }`, found by the differential fuzz) or a `Symbol` makes `String()` throw.
 */
export function describeValue(value: unknown): string {
  if (value instanceof Error) return typeof value.message === 'string' ? value.message : value.name
  if (typeof value === 'string') return value
  try {
    return String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}
