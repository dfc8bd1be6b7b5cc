/**
 * CORS, for an app served from another origin than this server (a dev server on :5173, this one on
 * :4317). The `cors` option is one origin (`http://localhost:5173`), whose pages may also send the
 * user cookie (credentials), or `*`: any origin, without credentials (the browser then refuses
 * `credentials: 'include'`; send `Authorization` instead).
 */

/** The headers a page sends besides the CORS-safelisted ones. */
const allowedHeaders = ['Authorization', 'Content-Type', 'Accept']

/** A header name, as `Access-Control-Request-Headers` lists them. */
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** Checks a `cors` option; returns it, or throws a TypeError that says what is expected. */
export function checkCorsOrigin(origin: string): string {
  if (origin === '*') return origin
  let parsed: URL | undefined
  try {
    parsed = new URL(origin)
  } catch {
    parsed = undefined
  }
  if (!parsed || parsed.origin === 'null' || parsed.origin !== origin) {
    throw new TypeError(
      `cors must be "*" or an origin such as "http://localhost:5173" (scheme, host and port, no path), not "${origin}".`,
    )
  }
  return origin
}

/** What every answer carries (error answers and SSE streams too); none without `cors`. */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return {}
  if (origin === '*') return { 'Access-Control-Allow-Origin': '*' }
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true' }
}

/**
 * The answer to a preflight (`OPTIONS`) for a route answering `method`. Besides Authorization,
 * Content-Type and Accept, it allows the headers the page asks for: an app may add its own
 * (core's `headers` option), and this is a development server.
 */
export function preflightResponse(origin: string, method: string, request: Request): Response {
  const known = new Set(allowedHeaders.map((name) => name.toLowerCase()))
  const requested = (request.headers.get('access-control-request-headers') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => token.test(name) && !known.has(name.toLowerCase()))
  const headers = [...allowedHeaders, ...new Set(requested)]
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(origin),
      'Access-Control-Allow-Methods': method,
      'Access-Control-Allow-Headers': headers.join(', '),
      'Access-Control-Max-Age': '600',
    },
  })
}
