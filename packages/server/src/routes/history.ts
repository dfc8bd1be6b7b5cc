import { requireUser, type BackendContext } from '../context'
import { revalidatableDataResponse } from '../http'
import { ownedThread } from '../threads'
import type { Route } from './match'

/**
 * `GET …/chat/:threadId/messages`: the thread's history snapshot, as the flavor reads it, with a
 * weak ETag; an `If-None-Match` naming it is answered `304` with no body (as n8n 2.41 answers).
 */
export async function messages(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'messages' }>,
): Promise<Response> {
  const user = await requireUser(context, request, 'agent:read')
  const body = context.flavor.history(await ownedThread(context, route.threadId, route, user))
  if (body === undefined) throw context.flavor.threadNotFound(route.threadId)
  return revalidatableDataResponse(request, body)
}
