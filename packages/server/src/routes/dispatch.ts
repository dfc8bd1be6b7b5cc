import { abandoned } from '../admission'
import type { BackendContext } from '../context'
import { preflightResponse } from '../cors'
import { ReadyAnswer, RestError } from '../http'
import { messages } from './history'
import { checkRouteIds, matchRoute, routeMethods, type Route, type RouteName } from './match'
import { push } from './push'
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
  }
}

/**
 * Matches a request under `basePath` to its route and answers it. Whatever goes wrong becomes an
 * answer: `fetch` never rejects, so the host never drops a socket without answering.
 */
export async function dispatch(
  context: BackendContext,
  request: Request,
  basePath: string,
  cors: string | undefined,
): Promise<Dispatched> {
  const { flavor } = context
  const url = new URL(request.url)
  const path = url.pathname.startsWith(`${basePath}/`)
    ? url.pathname.slice(basePath.length)
    : undefined
  const matched = path === undefined ? undefined : matchRoute(path)
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
    if (request.method !== method) {
      return { route: name, response: flavor.noRoute(request.method, url.pathname, method) }
    }
    checkRouteIds(matched)
    return { route: name, response: await serve(context, request, matched) }
  } catch (error) {
    return { route: name, response: failureResponse(context, request, error) }
  }
}

/** The answer to what a handler threw: its REST error, or a 500 (a 499 if the client left). */
function failureResponse(context: BackendContext, request: Request, error: unknown): Response {
  if (error instanceof ReadyAnswer) return error.response
  if (error instanceof RestError) return context.flavor.errorResponse(error, request)
  if (request.signal.aborted) return abandoned()
  const failure = new RestError(
    'server_error',
    'The reference server failed on this request; try again.',
  )
  return context.flavor.errorResponse(failure, request)
}
