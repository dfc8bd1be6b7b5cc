import { capabilitiesHeader, formatCapabilities } from '@preview-chat/core/contract'
import { abandoned, refusalAnswer, turnRefusal } from '../admission'
import type { BackendContext } from '../context'
import { maxRunning, readBody, requireUser } from '../context'
import { enqueue } from '../queue/model'
import { sseResponse } from '../sse'
import { threadKeyOf } from '../threads'
import type { Route } from './match'

/**
 * `POST …/chat`: a new message starts a turn, whose SSE stream is the answer. A message naming no
 * thread starts one under a fresh id; one naming an unknown thread creates it where the flavor
 * says so (the spec: with `newSession: true`), and is refused in-band otherwise. Where the flavor
 * queues, the message is queued (`message-queued`) and its turn streams once taken up. The answer
 * names the flavor's capabilities (`Preview-Chat-Capabilities`), so a client learns them.
 */
export async function chat(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'chat' }>,
): Promise<Response> {
  const response = await answerChat(context, request, route)
  const { capabilities } = context.flavor
  if (capabilities.length > 0 && response.status === 200) {
    response.headers.set(capabilitiesHeader, formatCapabilities(capabilities))
  }
  return response
}

async function answerChat(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'chat' }>,
): Promise<Response> {
  const { flavor, store } = context
  const user = await requireUser(context, request, 'agent:execute')
  const body = flavor.parseChat(await readBody(context, request))
  if (request.signal.aborted) return abandoned()
  const key = threadKeyOf(route, user, body.sessionId ?? crypto.randomUUID())
  // Only the flavors that dedupe keep the client's messageId as a claim.
  const dedupes = flavor.capabilities.includes('message-dedupe')
  const messageId = dedupes ? body.messageId : undefined
  // "A duplicate is answered with `done` alone — no queue id, no execution id — and rolls back
  // any session it would have created": checked before the thread is looked up or made (and
  // again, atomically, by the admission).
  if (messageId !== undefined && (await store.hasMessageId(key, messageId))) {
    return refusalAnswer('duplicate_message')
  }
  const thread = await store.readThread(key)
  if (thread) {
    const refusal =
      flavor.creationRace(thread) ??
      (flavor.capabilities.includes('message-queue') ? undefined : turnRefusal(flavor, thread))
    if (refusal) return refusal
  } else if (!flavor.createsThread(body)) {
    return refusalAnswer('thread_not_found')
  }
  const message = { text: body.message, ...(messageId !== undefined && { messageId }) }
  if (flavor.capabilities.includes('message-queue')) return enqueue(context, key, message)
  const admitted = await context.admit('message', (execution) =>
    store.admitTurn({
      thread: key,
      create: true,
      exclusive: flavor.refusesConcurrentTurns,
      execution,
      ...maxRunning(context),
      ...(messageId !== undefined && { messageId }),
    }),
  )
  if (!admitted.ok) return refusalAnswer(admitted.reason)
  const { stream } = context.begin({
    ...admitted,
    input: { kind: 'message', message: body.message },
    userText: body.message,
    ...(body.messageId !== undefined && { messageId: body.messageId }),
    signal: request.signal,
  })
  return sseResponse(stream)
}
