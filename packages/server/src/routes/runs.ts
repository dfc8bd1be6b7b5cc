import type { RunCancelAnswer } from '@preview-chat/core/contract'
import { abandoned, refusalAnswer, turnRefusal } from '../admission'
import { maxRunning, readBody, requireUser, type BackendContext } from '../context'
import { dataResponse, RestError } from '../http'
import { takeUpNext } from '../queue/model'
import { sseResponse } from '../sse'
import { announceExecution, keyOfThread, ownedThread, scopeOf } from '../threads'
import type { Route } from './match'

/** `POST …/chat/resume`: continues a suspended tool call in a new turn, its SSE stream the answer. */
export async function resume(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'resume' }>,
): Promise<Response> {
  const { flavor, store } = context
  const user = await requireUser(context, request, 'agent:execute')
  const body = flavor.parseResume(await readBody(context, request))
  // A run named through another agent's or project's route answers as an unknown one.
  const scope = scopeOf(route, user)
  const run = await store.readRun(body.runId, scope)
  if (!run || run.payload.toolCallId !== body.toolCallId) {
    return flavor.runNotFound(body.runId, 'resume', body.toolCallId)
  }
  const thread = await ownedThread(context, run.threadId, route, user)
  if (run.state !== 'open') throw runClosed(run.runId, run.state)
  const refusal = turnRefusal(flavor, thread)
  if (refusal) return refusal
  if (request.signal.aborted) return abandoned()
  const admitted = await context.admit('resume', (execution) =>
    store.resumeRun({
      runId: run.runId,
      scope,
      toolCallId: body.toolCallId,
      exclusive: flavor.refusesConcurrentTurns,
      execution,
      ...maxRunning(context),
    }),
  )
  if (!admitted.ok) {
    if (admitted.reason === 'run_not_found') {
      return flavor.runNotFound(body.runId, 'resume', body.toolCallId)
    }
    if (admitted.reason === 'run_closed') throw runClosed(run.runId, admitted.state)
    return refusalAnswer(admitted.reason)
  }
  const { stream } = context.begin({
    thread: admitted.thread,
    execution: admitted.execution,
    input: { kind: 'resume', payload: run.payload, resumeData: body.resumeData },
    resumes: run.payload,
    signal: request.signal,
  })
  return sseResponse(stream)
}

const runClosed = (runId: string, state: string) =>
  new RestError(
    'conflict',
    `The run "${runId}" was already ${state}.`,
    'Read the conversation again to see its current state.',
  )

/**
 * `DELETE …/chat/runs/:runId`: "Suspended turns use the existing checkpoint cancellation path".
 * The run's tool call is rejected and the owner's tabs hear of it.
 */
export async function cancelRun(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'cancelRun' }>,
): Promise<Response> {
  const { flavor, store } = context
  const user = await requireUser(context, request, 'agent:execute')
  const scope = scopeOf(route, user)
  const { run, cancelled } = await store.cancelRun(
    route.runId,
    scope,
    'The suspended run was cancelled.',
  )
  if (!run) return flavor.runNotFound(route.runId, 'cancel')
  const thread = await ownedThread(context, run.threadId, route, user)
  if (cancelled) {
    await announceExecution(context, thread, run.executionId)
    // The checkpoint no longer holds the queue (next-era): the next message may start.
    if (flavor.capabilities.includes('message-queue'))
      await takeUpNext(context, keyOfThread(thread))
  }
  const answer: RunCancelAnswer = { cancelled }
  return dataResponse(answer)
}
