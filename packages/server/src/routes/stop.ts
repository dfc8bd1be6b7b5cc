import type { StopAnswer } from '@preview-chat/core/contract'
import { requireUser, type BackendContext } from '../context'
import { dataResponse, RestError } from '../http'
import { ownedThread } from '../threads'
import type { Route } from './match'

/**
 * `DELETE …/chat/:threadId/executions/:executionId`: "The server cancels the local execution or
 * relays the request to the main that owns it". The answer says whether it was accepted.
 */
export async function stop(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'stop' }>,
): Promise<Response> {
  const user = await requireUser(context, request, 'agent:execute')
  const thread = await ownedThread(context, route.threadId, route, user)
  const execution = await context.store.readExecution(route.executionId)
  // The execution's own thread, not merely one with the same id (another user may have one).
  const own =
    execution?.ownerId === thread.ownerId &&
    execution.projectId === thread.projectId &&
    execution.agentId === thread.agentId &&
    execution.threadId === thread.id
  if (!execution || !own) {
    throw new RestError('not_found', `No execution "${route.executionId}" in this conversation.`)
  }
  // "A late request cannot cancel a later execution": only the named execution is considered.
  let cancelRequested = false
  if (execution.status === 'running') {
    cancelRequested =
      execution.mainId === context.mainId
        ? context.cancelLocal(execution.id)
        : await context.bus.cancel(execution.mainId, execution.id)
  }
  const answer: StopAnswer = { cancelRequested }
  return dataResponse(answer)
}
