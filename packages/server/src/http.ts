import type { QueueConflict, RestErrorBody } from '@preview-chat/core/contract'

/** REST error codes of the reference server, sent as `code` next to the HTTP status. */
export type RestErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  /** A WebSocket upgrade from a page of another origin than this server's or `cors`'s. */
  | 'origin_not_allowed'
  | 'not_found'
  /** A path the API does not have (a wrong base URL): told apart from a thread that is not there. */
  | 'route_not_found'
  | 'method_not_allowed'
  | 'conflict'
  /** The queue's 409s (core's `QueueConflict`): the next-era flavor's queue routes. */
  | QueueConflict
  | 'request_timeout'
  | 'payload_too_large'
  /** A body that is not typed `application/json` (against pages of other sites, see `guardsCrossSite`). */
  | 'unsupported_media_type'
  | 'headers_too_large'
  /** The user runs `limits.maxRunningTurnsPerUser` turns already (429, with `Retry-After`). */
  | 'too_many_turns'
  /** The backend is shutting down (503, with `Retry-After`): another instance will answer. */
  | 'shutting_down'
  | 'server_error'
  /** The deployment's record (Postgres) cannot be reached: retry after `Retry-After`. */
  | 'store_unavailable'
  /** The deployment's bus (Redis) cannot be reached: a Stop could not be relayed; retry. */
  | 'bus_unavailable'
  /** A relayed Stop got no answer from the main that runs the execution in time; retry. */
  | 'relay_timeout'

const statusOf: Record<RestErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  origin_not_allowed: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  queue_changed: 409,
  queue_item_started: 409,
  queue_item_steering: 409,
  not_steerable: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  too_many_turns: 429,
  shutting_down: 503,
  server_error: 500,
  store_unavailable: 503,
  bus_unavailable: 503,
  relay_timeout: 503,
}

/** Thrown inside a handler to answer with a REST error; `backend.ts` turns it into a response. */
export class RestError extends Error {
  readonly code: RestErrorCode
  readonly status: number
  readonly hint: string | undefined

  constructor(code: RestErrorCode, message: string, hint?: string) {
    super(message)
    this.name = 'RestError'
    this.code = code
    this.status = statusOf[code]
    this.hint = hint
  }
}

/**
 * Thrown inside a handler to answer with a response built in advance: a flavor's own error body
 * that `RestError` cannot express (n8n's validation issues).
 */
export class ReadyAnswer extends Error {
  constructor(readonly response: Response) {
    super(`HTTP ${response.status}`)
    this.name = 'ReadyAnswer'
  }
}

export const jsonHeaders = { 'Content-Type': 'application/json; charset=UTF-8' }

/**
 * A JSON answer with its length: the connection stays reusable even where the body is not sent
 * (a client that asked with HEAD cannot tell where a body of unknown length would have ended).
 */
export function jsonResponse(
  value: unknown,
  status: number,
  headers: Record<string, string> = {},
): Response {
  return textResponse(JSON.stringify(value), status, { ...jsonHeaders, ...headers })
}

/** A text answer with its length (see `jsonResponse`). */
export function textResponse(
  text: string,
  status: number,
  headers: Record<string, string>,
): Response {
  const bytes = new TextEncoder().encode(text)
  return new Response(bytes, {
    status,
    headers: { ...headers, 'Content-Length': String(bytes.byteLength) },
  })
}

/** Successful REST answers are wrapped `{ data }` (wire contract, "JSON envelope"). */
export function dataResponse(data: unknown, status = 200): Response {
  return jsonResponse({ data }, status, {})
}

/**
 * A `{ data }` answer that a client can revalidate, as the released n8n 2.41 answers its history
 * read (Express's defaults): a weak `ETag` made from the body (`W/"<length in hex>-<SHA-1 in
 * base64, 27 characters>"`), no `Cache-Control`, and `304 Not Modified` with no body to an
 * `If-None-Match` that names it (RFC 9110 13.1.2, weak comparison; `*` matches), unless the request
 * says `Cache-Control: no-cache` (Express's `fresh`). Without Web Crypto (a page on plain HTTP
 * away from localhost) the answer has no ETag.
 */
export async function revalidatableDataResponse(
  request: Request,
  data: unknown,
): Promise<Response> {
  const bytes = new TextEncoder().encode(JSON.stringify({ data }))
  const headers: Record<string, string> = {
    ...jsonHeaders,
    'Content-Length': String(bytes.byteLength),
  }
  const subtle = globalThis.crypto?.subtle
  if (subtle) {
    const digest = new Uint8Array(await subtle.digest('SHA-1', bytes))
    const hash = btoa(String.fromCharCode(...digest)).slice(0, 27)
    headers.ETag = `W/"${bytes.byteLength.toString(16)}-${hash}"`
    if (isFresh(request.headers, headers.ETag))
      return new Response(null, { status: 304, headers: { ETag: headers.ETag } })
  }
  return new Response(bytes, { headers })
}

/** Whether the request's `If-None-Match` names `etag` (weakly), as Express's `fresh` decides. */
function isFresh(headers: Headers, etag: string): boolean {
  const noneMatch = headers.get('if-none-match')
  if (
    noneMatch === null ||
    /(?:^|,)\s*?no-cache\s*?(?:,|$)/.test(headers.get('cache-control') ?? '')
  )
    return false
  if (noneMatch.trim() === '*') return true
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '')
  return noneMatch.split(',').some((tag) => opaque(tag) === opaque(etag))
}

/** Errors are `{ code, message, hint? }` with the HTTP status (wire contract, "JSON envelope"). */
export function errorBody(error: RestError): RestErrorBody {
  return {
    code: error.code,
    message: error.message,
    ...(error.hint !== undefined && { hint: error.hint }),
  }
}

export function errorResponse(error: RestError, headers: Record<string, string> = {}): Response {
  return jsonResponse(errorBody(error), error.status, headers)
}

/** 1 MiB: a chat message is text, anything larger is refused with 413 before it is parsed. */
export const maxBodyBytes = 1024 * 1024

/**
 * Refuses (415) a body not typed `application/json` (a parameter such as `; charset=utf-8` is
 * fine). A page of another site can POST `text/plain` with the user's cookie and no preflight (a
 * CORS "simple request"); it cannot send `application/json` so.
 */
export function requireJsonType(request: Request): void {
  const type = (request.headers.get('content-type') ?? '').split(';', 1)[0]?.trim().toLowerCase()
  if (type === 'application/json') return
  throw new RestError(
    'unsupported_media_type',
    `Send the request body as JSON with Content-Type: application/json (it came typed ${JSON.stringify(request.headers.get('content-type') ?? 'as nothing')}).`,
    'A page of another site can send other types with the cookie and no preflight, so only JSON is read.',
  )
}

/**
 * Reads a JSON body of at most `limit` bytes. Counts while reading, so a body that lies about
 * (or omits) its Content-Length is still cut at the limit.
 */
export async function readJsonBody(request: Request, limit = maxBodyBytes): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > limit) throw tooLarge(limit)
  if (!request.body)
    throw new RestError('bad_request', 'The request has no body; send a JSON object.')
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  const text = new TextDecoder().decode(bytes)
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new RestError(
      'bad_request',
      'The request body is not valid JSON.',
      'Send a JSON object with Content-Type: application/json.',
    )
  }
}

function tooLarge(limit: number): RestError {
  return new RestError(
    'payload_too_large',
    `The request body is larger than ${limit} bytes.`,
    'Send a shorter message.',
  )
}
