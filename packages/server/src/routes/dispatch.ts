import { abandoned } from '../admission'
import type { BackendContext } from '../context'
import { originMaySendCookies, preflightResponse, type OwnOrigin } from '../cors'
import { ReadyAnswer, RestError } from '../http'
import { retryAfterSeconds, unavailableError } from '../unavailable'
import { authenticatesByCookie } from '../users'
import { messages } from './history'
import { checkRouteIds, matchRoute, routeMethods, type Route, type RouteName } from './match'
import { push } from './push'
import { editQueued, readQueue, removeQueued, reorderQueued, steerQueued } from './queue'
import { cancelRun, resume } from './runs'
import { stop } from './stop'
import { chat } from './turn'

/** A request's answer, and the route it was logged under. */
export interface Dispatched {
  response: Response
  route: RouteName | 'unknown'
}

/** The route's handler; every route family lives in its own file. */
async function serve(context: BackendContext, request: Request, matched: Route): Promise<Response> {
  switch (matched.name) {
    case 'chat':
      return chat(context, request, matched)
    case 'resume':
      return resume(context, request, matched)
    case 'messages':
      return messages(context, request, matched)
    case 'stop':
      return stop(context, request, matched)
    case 'cancelRun':
      return cancelRun(context, request, matched)
    case 'push':
      return push(context, request)
    case 'queue':
      return readQueue(context, request, matched)
    case 'queueItem':
      return request.method === 'DELETE'
        ? removeQueued(context, request, matched)
        : editQueued(context, request, matched)
    case 'queueReorder':
      return reorderQueued(context, request, matched)
    case 'queueSteer':
      return steerQueued(context, request, matched)
  }
}

/**
 * Matches a request under `basePath` to its route and answers it. Whatever goes wrong becomes an
 * answer: `fetch` never rejects, so the host never drops a socket without answering. A `HEAD` is
 * answered as its `GET`, without the body (RFC 9110, 9.3.2: the same status and headers).
 */
export async function dispatch(
  context: BackendContext,
  request: Request,
  basePath: string,
  cors: string | undefined,
  own: OwnOrigin,
): Promise<Dispatched> {
  const dispatched = await answer(context, request, basePath, cors, own)
  if (request.method !== 'HEAD') return dispatched
  return { ...dispatched, response: withoutBody(dispatched.response) }
}

/**
 * The same status and headers with no body; the body is cancelled, so that a stream it was (a push
 * stream's subscription) ends at once.
 */
function withoutBody(response: Response): Response {
  if (!response.body) return response
  void response.body.cancel().catch(() => undefined)
  return new Response(null, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}

async function answer(
  context: BackendContext,
  request: Request,
  basePath: string,
  cors: string | undefined,
  own: OwnOrigin,
): Promise<Dispatched> {
  const { flavor } = context
  const url = new URL(request.url)
  const path = url.pathname.startsWith(`${basePath}/`)
    ? url.pathname.slice(basePath.length)
    : undefined
  const match = path === undefined ? undefined : matchRoute(path)
  const matched = match?.route
  // A route the flavor lacks is logged under its name (a client's Stop attempt stays countable).
  const name = matched?.name ?? 'unknown'
  try {
    if (!matched || !flavor.serves(matched.name)) {
      return { route: name, response: flavor.noRoute(request.method, url.pathname) }
    }
    const method = routeMethods[matched.name]
    if (cors !== undefined && request.method === 'OPTIONS') {
      return { route: name, response: preflightResponse(cors, method, request) }
    }
    // "All general-purpose servers MUST support the methods GET and HEAD" (RFC 9110, 9.1).
    const asGet = method === 'GET' && request.method === 'HEAD'
    if (!method.split(', ').includes(request.method) && !asGet) {
      const allow = method === 'GET' ? 'GET, HEAD' : method
      return { route: name, response: flavor.noRoute(request.method, url.pathname, allow) }
    }
    if (match?.undecodable) {
      return { route: name, response: flavor.undecodableParam(match.undecodable) }
    }
    checkRouteIds(matched)
    if (flavor.guardsCrossSite && request.method !== 'GET' && request.method !== 'HEAD') {
      refuseCrossSiteCookies(request, cors, own)
    }
    return { route: name, response: await serve(context, request, matched) }
  } catch (error) {
    return { route: name, response: failureResponse(context, request, error) }
  }
}

/**
 * A POST or DELETE that a browser sent with the user's cookie from a page whose origin may not
 * send cookies (a page of another site: CSRF) is refused, as the push WebSocket refuses its
 * upgrade. A bearer header is the page's own doing, and another origin's pages need CORS for it.
 */
function refuseCrossSiteCookies(request: Request, cors: string | undefined, own: OwnOrigin): void {
  if (!authenticatesByCookie(request.headers) || originMaySendCookies(request.headers, cors, own)) {
    return
  }
  throw new RestError(
    'origin_not_allowed',
    `A page of ${request.headers.get('origin')} may not send this server's cookie.`,
    "Serve the page from this server's origin (or through a proxy that forwards the browser's Host; a name other than a loopback one or the bound address needs --allowed-host <name>), start the server with --cors <the page's origin>, or authenticate with an Authorization header.",
  )
}

/** The answer to what a handler threw: its REST error, or a 500 (a 499 if the client left). */
function failureResponse(context: BackendContext, request: Request, error: unknown): Response {
  if (error instanceof ReadyAnswer) return error.response
  if (error instanceof RestError) return context.flavor.errorResponse(error, request)
  // The record or the bus is away (restarting): a typed 503 the client retries, on every route.
  const unavailable = unavailableError(error)
  if (unavailable) {
    const response = context.flavor.errorResponse(unavailable, request)
    response.headers.set('Retry-After', String(retryAfterSeconds))
    return response
  }
  if (request.signal.aborted) return abandoned()
  const failure = new RestError(
    'server_error',
    'The reference server failed on this request; try again.',
  )
  return context.flavor.errorResponse(failure, request)
}
