import { pathSegmentIdProblem } from '@preview-chat/core/contract'
import { RestError } from '../http'

/** The endpoints of the wire contract ("Endpoints"), matched under the REST base. */
export type Route =
  | { name: 'chat'; projectId: string; agentId: string }
  | { name: 'resume'; projectId: string; agentId: string }
  | { name: 'messages'; projectId: string; agentId: string; threadId: string }
  | { name: 'stop'; projectId: string; agentId: string; threadId: string; executionId: string }
  | { name: 'cancelRun'; projectId: string; agentId: string; runId: string }
  | { name: 'push' }
  // The platform's queue (next-era.md, "Routes"), served by the next-era flavor only.
  | { name: 'queue'; projectId: string; agentId: string; threadId: string }
  | QueueItemRoute<'queueItem'>
  | QueueItemRoute<'queueReorder'>
  | QueueItemRoute<'queueSteer'>

/** A route that names one item of a thread's queue. */
export interface QueueItemRoute<N extends string = string> {
  name: N
  projectId: string
  agentId: string
  threadId: string
  queueId: string
}

export type RouteName = Route['name']

/**
 * The methods each route answers (`, `-separated: `PATCH, DELETE` edits or removes a queue item);
 * another method on a known path is a 405.
 */
export const routeMethods: Record<RouteName, string> = {
  chat: 'POST',
  resume: 'POST',
  messages: 'GET',
  stop: 'DELETE',
  cancelRun: 'DELETE',
  push: 'GET',
  queue: 'GET',
  queueItem: 'PATCH, DELETE',
  queueReorder: 'POST',
  queueSteer: 'POST',
}

const queueRoutes: ReadonlySet<RouteName> = new Set([
  'queue',
  'queueItem',
  'queueReorder',
  'queueSteer',
])

/** Whether `name` is one of the queue's routes (which only a flavor with a queue serves). */
export const isQueueRoute = (name: RouteName): boolean => queueRoutes.has(name)

/** A route param as it came in the path (`name`: `threadId`, …). */
export interface RawParam {
  name: string
  segment: string
}

/** A matched route, and the first of its params whose escapes do not decode, if one does not. */
export interface RouteMatch {
  route: Route
  /**
   * A param whose percent-escapes are not UTF-8 text (`%ED%A0%BD`, the bytes a lone surrogate
   * would have; `%C0%AF`; a bare `%`): it names no id, and the flavor refuses it with a 400.
   */
  undecodable?: RawParam
}

/** A path segment decoded, or undefined when its escapes are not UTF-8 text (never throws). */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/**
 * Matches a path (below the base, e.g. `/projects/p/agents/v2/a/chat`) to its route. Never throws:
 * a segment that does not decode is no literal (a 404 where one is expected), and where a param
 * is expected the route still matches, with that param `undecodable`.
 */
export function matchRoute(path: string): RouteMatch | undefined {
  const raw = path.split('/').filter((segment) => segment !== '')
  const decoded = raw.map(decodeSegment)
  let undecodable: RouteMatch['undecodable']
  /** The param at `index` (its raw text when it does not decode: `undecodable` says so). */
  const param = (name: string, index: number): string => {
    const value = decoded[index]
    if (value !== undefined) return value
    undecodable ??= { name, segment: raw[index] ?? '' }
    return raw[index] ?? ''
  }
  const route = routeOf(decoded, param)
  return route && { route, ...(undecodable && { undecodable }) }
}

/** The route that the decoded segments name (`param` reads an id segment), if any. */
function routeOf(
  decoded: readonly (string | undefined)[],
  param: (name: string, index: number) => string,
): Route | undefined {
  if (decoded.length === 1 && decoded[0] === 'push') return { name: 'push' }
  const [projects, , agents, v2, , chat, first, second] = decoded
  if (projects !== 'projects' || agents !== 'agents' || v2 !== 'v2' || chat !== 'chat') {
    return undefined
  }
  const scope = () => ({ projectId: param('projectId', 1), agentId: param('agentId', 4) })
  const { length } = decoded
  if (length === 6) return { name: 'chat', ...scope() }
  if (first === 'resume' && length === 7) return { name: 'resume', ...scope() }
  if (first === 'runs' && length === 8) {
    return { name: 'cancelRun', ...scope(), runId: param('runId', 7) }
  }
  if (second === 'messages' && length === 8) {
    return { name: 'messages', ...scope(), threadId: param('threadId', 6) }
  }
  if (second === 'queue') return queueRouteOf(decoded, scope, param)
  if (second === 'executions' && length === 9) {
    return {
      name: 'stop',
      ...scope(),
      threadId: param('threadId', 6),
      executionId: param('executionId', 8),
    }
  }
  return undefined
}

/** `…/chat/:threadId/queue`, `…/queue/:queueId`, `…/queue/:queueId/reorder` or `…/steer`. */
function queueRouteOf(
  decoded: readonly (string | undefined)[],
  scope: () => { projectId: string; agentId: string },
  param: (name: string, index: number) => string,
): Route | undefined {
  const { length } = decoded
  const thread = () => ({ ...scope(), threadId: param('threadId', 6) })
  if (length === 8) return { name: 'queue', ...thread() }
  const item = () => ({ ...thread(), queueId: param('queueId', 8) })
  if (length === 9) return { name: 'queueItem', ...item() }
  if (length !== 10) return undefined
  if (decoded[9] === 'reorder') return { name: 'queueReorder', ...item() }
  if (decoded[9] === 'steer') return { name: 'queueSteer', ...item() }
  return undefined
}

/**
 * Refuses an id that cannot travel as one URL path segment (`''`; `.` and `..`, which a URL parser
 * collapses; a lone surrogate, which no URL can carry) with a 400, as the client refuses it
 * (core's `pathSegmentIdProblem`, one rule for both). `name` says where it was (`sessionId`).
 */
export function checkPathId(name: string, id: unknown): void {
  const problem = pathSegmentIdProblem(id)
  if (problem === null) return
  throw new RestError(
    'bad_request',
    `The ${name} ${problem}; ids travel as one URL path segment.`,
    'Use any other non-empty string as an id, e.g. a UUID.',
  )
}

/**
 * Refuses a route whose path names such an id. A path that went through a URL parser has no `.`
 * or `..` left (they collapsed into another path) and no lone surrogate (the parser writes
 * U+FFFD's bytes instead); a host that matches raw paths could still bring them. (Escapes that
 * decode to no text, `%ED%A0%BD`, are the flavor's `undecodableParam`.)
 */
export function checkRouteIds(route: Route): void {
  const { name: _name, ...ids } = route
  for (const [name, id] of Object.entries(ids)) checkPathId(name, id)
}
