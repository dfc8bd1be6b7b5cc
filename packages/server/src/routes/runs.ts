import type { RunCancelAnswer } from '@preview-chat/core/contract'
import { abandoned, turnRefusal } from '../admission'
import { readBody, requireUser, type BackendContext } from '../context'
import { dataResponse, RestError } from '../http'
import { takeUpNext } from '../queue/model'
import { sseResponse } from '../sse'
import { threadKey, type RunRecord } from '../store'
import { closeSuspension, executionUpdated, ownedThread, type RouteScope } from '../threads'
import type { PreviewChatUser } from '../users'
import type { Route } from './match'

/**
 * The run, if it is of the route's own thread scope (its owner, project and agent): a run named
 * through another agent's or project's route answers exactly as an unknown one, as another user's.
 */
function ownRun(
  run: RunRecord | undefined,
  route: RouteScope,
  user: PreviewChatUser,
): RunRecord | undefined {
  const scope = { ownerId: user.id, projectId: route.projectId, agentId: route.agentId }
  return run && threadKey(run, run.threadId) === threadKey(scope, run.threadId) ? run : undefined
}

/** `POST …/chat/resume`: continues a suspended tool call in a new turn, its SSE stream the answer. */
export async function resume(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'resume' }>,
): Promise<Response> {
  const { flavor, store } = context
  const user = requireUser(context, request, 'agent:execute')
  const body = flavor.parseResume(await readBody(context, request))
  const run = ownRun(store.runs.get(body.runId), route, user)
  if (!run || run.payload.toolCallId !== body.toolCallId) {
    return flavor.runNotFound(body.runId, 'resume', body.toolCallId)
  }
  const thread = ownedThread(context, run.threadId, route, user)
  if (run.state !== 'open') {
    throw new RestError(
      'conflict',
      `The run "${run.runId}" was already ${run.state}.`,
      'Read the conversation again to see its current state.',
    )
  }
  const refusal = turnRefusal(flavor, thread)
  if (refusal) return refusal
  if (request.signal.aborted) return abandoned()
  run.state = 'resumed'
  closeSuspension(thread, run.runId)
  const stream = context.begin({
    thread,
    kind: 'resume',
    input: { kind: 'resume', payload: run.payload, resumeData: body.resumeData },
    resumes: run.payload,
    signal: request.signal,
  })
  return sseResponse(stream)
}

/**
 * `DELETE …/chat/runs/:runId`: "Suspended turns use the existing checkpoint cancellation path".
 * The run's tool call is rejected and the owner's tabs hear of it.
 */
export function cancelRun(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'cancelRun' }>,
): Response {
  const { flavor, store } = context
  const user = requireUser(context, request, 'agent:execute')
  const run = ownRun(store.runs.get(route.runId), route, user)
  if (!run) return flavor.runNotFound(route.runId, 'cancel')
  const thread = ownedThread(context, run.threadId, route, user)
  let cancelled = false
  if (run.state === 'open') {
    run.state = 'cancelled'
    closeSuspension(thread, run.runId, 'The suspended run was cancelled.')
    store.push.publish(thread.ownerId, executionUpdated(thread, run.executionId))
    cancelled = true
    // The checkpoint no longer holds the queue (next-era): the next message may start.
    if (flavor.capabilities.includes('message-queue')) takeUpNext(context, thread)
  }
  const answer: RunCancelAnswer = { cancelled }
  return dataResponse(answer)
}
