import { requireUser, type BackendContext } from '../context'
import { dataResponse } from '../http'
import { ownedThread } from '../threads'
import type { Route } from './match'

/** `GET …/chat/:threadId/messages`: the thread's history snapshot, as the flavor reads it. */
export function messages(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'messages' }>,
): Response {
  const user = requireUser(context, request, 'agent:read')
  const body = context.flavor.history(ownedThread(context, route.threadId, route, user))
  if (body === undefined) throw context.flavor.threadNotFound(route.threadId)
  return dataResponse(body)
}
