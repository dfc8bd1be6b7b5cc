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

export type RouteName = Route['name']

/** The method each route answers; another method on a known path is a 405. */
export const routeMethods: Record<RouteName, string> = {
  chat: 'POST',
  resume: 'POST',
  messages: 'GET',
  stop: 'DELETE',
  cancelRun: 'DELETE',
  push: 'GET',
}

/** Matches a path (below the base, e.g. `/projects/p/agents/v2/a/chat`) to its route. */
export function matchRoute(path: string): Route | undefined {
  const segments = path.split('/').filter((segment) => segment !== '')
  let decoded: string[]
  try {
    decoded = segments.map((segment) => decodeURIComponent(segment))
  } catch {
    return undefined
  }
  if (decoded.length === 1 && decoded[0] === 'push') return { name: 'push' }
  const [projects, projectId, agents, v2, agentId, chat, ...rest] = decoded
  if (projects !== 'projects' || agents !== 'agents' || v2 !== 'v2' || chat !== 'chat') {
    return undefined
  }
  if (!projectId || !agentId) return undefined
  const scope = { projectId, agentId }
  const [first, second, third, ...more] = rest
  if (more.length > 0) return undefined
  if (first === undefined) return { name: 'chat', ...scope }
  if (first === 'resume' && second === undefined) return { name: 'resume', ...scope }
  if (first === 'runs' && second !== undefined && third === undefined) {
    return { name: 'cancelRun', ...scope, runId: second }
  }
  if (second === 'messages' && third === undefined) {
    return { name: 'messages', ...scope, threadId: first }
  }
  if (second === 'executions' && third !== undefined) {
    return { name: 'stop', ...scope, threadId: first, executionId: third }
  }
  return undefined
}

/**
 * Refuses an id that cannot travel as one URL path segment ('', '.', '..': a URL parser collapses
 * the last two) with a 400, as the client refuses it. `name` says where it was (`sessionId`).
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
 * Refuses a route whose path names such an id. A path that went through a URL parser has none
 * left (they collapsed into another path); a host that matches raw paths could still bring one.
 */
export function checkRouteIds(route: Route): void {
  const { name: _name, ...ids } = route
  for (const [name, id] of Object.entries(ids)) checkPathId(name, id)
}
