import { capabilitiesHeader, formatCapabilities } from '@preview-chat/core/contract'
import type { ChatRequestBody } from '@preview-chat/core/contract'
import { abandoned, turnRefusal } from '../admission'
import type { BackendContext } from '../context'
import { readBody, requireUser } from '../context'
import { enqueue } from '../queue/model'
import { sseAnswer, sseResponse } from '../sse'
import { messageKey, type ThreadRecord } from '../store'
import { createThread, findThread, type RouteScope } from '../threads'
import type { PreviewChatUser } from '../users'
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
  const { flavor } = context
  const user = requireUser(context, request, 'agent:execute')
  const body = flavor.parseChat(await readBody(context, request))
  if (request.signal.aborted) return abandoned()
  const threadId = body.sessionId ?? crypto.randomUUID()
  // "A duplicate is answered with `done` alone — no queue id, no execution id — and rolls back
  // any session it would have created": checked before the thread is looked up or made.
  if (isDuplicate(context, route, user, threadId, body)) return sseAnswer({ type: 'done' })
  let thread = findThread(context, threadId, route, user)
  if (thread) {
    const refusal =
      flavor.creationRace(thread) ??
      (flavor.capabilities.includes('message-queue') ? undefined : turnRefusal(flavor, thread))
    if (refusal) return refusal
  } else if (!flavor.createsThread(body)) {
    return sseAnswer({
      type: 'error',
      message: 'Session not found',
      errorCode: 'session_not_found',
    })
  } else {
    thread = createThread(context, threadId, route, user)
  }
  accept(context, thread, body)
  if (flavor.capabilities.includes('message-queue')) {
    const item = enqueue(context, thread, { text: body.message, messageId: body.messageId })
    return sseResponse(item.stream)
  }
  const stream = context.begin({
    thread,
    kind: 'message',
    input: { kind: 'message', message: body.message },
    userText: body.message,
    ...(body.messageId !== undefined && { messageId: body.messageId }),
    signal: request.signal,
  })
  return sseResponse(stream)
}

/** Whether the thread accepted this `messageId` already (where the flavor dedupes at all). */
function isDuplicate(
  context: BackendContext,
  route: RouteScope,
  user: PreviewChatUser,
  threadId: string,
  body: ChatRequestBody,
): boolean {
  if (body.messageId === undefined || !context.flavor.capabilities.includes('message-dedupe')) {
    return false
  }
  const scope = { ownerId: user.id, projectId: route.projectId, agentId: route.agentId }
  return context.store.messageIds.has(messageKey(scope, threadId, body.messageId))
}

/**
 * The message is accepted (its execution or queue item is recorded next): its `messageId` is used
 * from now on, whatever becomes of it ("A removed message's id stays used").
 */
function accept(context: BackendContext, thread: ThreadRecord, body: ChatRequestBody): void {
  if (body.messageId === undefined || !context.flavor.capabilities.includes('message-dedupe')) {
    return
  }
  context.store.messageIds.add(messageKey(thread, thread.id, body.messageId))
}
