/**
 * CORS, for an app served from another origin than this server (a dev server on :5173, this one on
 * :4317). The `cors` option is one origin (`http://localhost:5173`), whose pages may also send the
 * user cookie (credentials), or `*`: any origin, without credentials (the browser then refuses
 * `credentials: 'include'`; send `Authorization` instead).
 */

import { isOwnHost } from './hosts'

/**
 * The headers a page sends besides the CORS-safelisted ones: the client's conditional history
 * read carries `If-None-Match` and its own `Cache-Control` (core's transport), so that no `fetch`
 * turns it into a `no-cache` read.
 */
const allowedHeaders = ['Authorization', 'Content-Type', 'Accept', 'If-None-Match', 'Cache-Control']

/** A header name, as `Access-Control-Request-Headers` lists them. */
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** `value` parsed, when it is an origin as browsers write one (`http://localhost:5173`). */
function parseOrigin(value: string): URL | undefined {
  let parsed: URL
  try {
    parsed = new URL(value)
  } catch {
    return undefined
  }
  return parsed.origin !== 'null' && parsed.origin === value ? parsed : undefined
}

/** Checks a `cors` option; returns it, or throws a TypeError that says what is expected. */
export function checkCorsOrigin(origin: string): string {
  if (origin !== '*' && !parseOrigin(origin)) {
    throw new TypeError(
      `cors must be "*" or an origin such as "http://localhost:5173" (scheme, host and port, no path), not "${origin}".`,
    )
  }
  return origin
}

/** Who this server is, as the Origin check of a push WebSocket needs it. */
export interface OwnOrigin {
  /** The scheme pages reach it by: `http:` on plain HTTP, `https:` behind TLS. */
  scheme: string
  /** Its names besides loopback ones: the address it is bound to, `allowedHosts` (`isOwnHost`). */
  hosts: readonly string[]
}

/** The page scheme of a request URL: `ws:` is reached from `http:` pages' origin, `wss:` from `https:`. */
export function pageSchemeOf(url: URL): string {
  if (url.protocol === 'ws:') return 'http:'
  if (url.protocol === 'wss:') return 'https:'
  return url.protocol
}

/**
 * Whether a request that carries the user's cookie whatever page sent it may be served: a
 * browser's WebSocket upgrade, which CORS does not cover. It may when it has no `Origin` (no page
 * sent it: curl, a test, a server), when `cors` lets that origin's pages send cookies, as
 * `corsHeaders` tells the browser for fetch requests (the one origin it names, never `*`), or when
 * its origin is the server's own as the browser reached it: the origin's host is the `Host` header
 * (this server, or a dev proxy in front of it that forwards the browser's `Host`, as Vite's does),
 * its scheme the server's, and its name the server's own (`isOwnHost`), not a name an attacker
 * made resolve to this server (DNS rebinding sends a matching `Host` and `Origin` too).
 */
export function originMaySendCookies(
  headers: Headers,
  cors: string | undefined,
  own: OwnOrigin,
): boolean {
  const origin = headers.get('origin')
  if (origin === null) return true
  if (cors !== '*' && origin === cors) return true
  const host = headers.get('host')
  const page = parseOrigin(origin)
  if (host === null || page?.host !== host.toLowerCase()) return false
  // Behind a proxy that ends TLS the page is `https:` and this server `http:`: the browser's own
  // `Sec-Fetch-Site` (which no page can set) says the page is of the origin it asked.
  const sameOrigin = headers.get('sec-fetch-site') === 'same-origin'
  return (sameOrigin || page.protocol === own.scheme) && isOwnHost(page.hostname, own.hosts)
}

/** What every answer carries (error answers and SSE streams too); none without `cors`. */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return {}
  // A page of another origin reads only safelisted headers unless told: the client needs these
  // to honour a Retry-After (an HTTP date is counted from the answer's Date), and the ETag for
  // its conditional history reads.
  const expose = { 'Access-Control-Expose-Headers': 'Retry-After, Date, ETag' }
  if (origin === '*') return { 'Access-Control-Allow-Origin': '*', ...expose }
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Credentials': 'true',
    ...expose,
  }
}

/**
 * The answer to a preflight (`OPTIONS`) for a route answering `method`. Besides `allowedHeaders`,
 * it allows the headers the page asks for: an app may add its own
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
