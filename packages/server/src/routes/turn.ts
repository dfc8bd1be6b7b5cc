import { abandoned, turnRefusal } from '../admission'
import type { BackendContext } from '../context'
import { readBody, requireUser } from '../context'
import { sseAnswer, sseResponse } from '../sse'
import { createThread, findThread } from '../threads'
import type { Route } from './match'

/**
 * `POST …/chat`: a new message starts a turn, whose SSE stream is the answer. A message naming no
 * thread starts one under a fresh id; one naming an unknown thread creates it where the flavor
 * says so (the spec: with `newSession: true`), and is refused in-band otherwise.
 */
export async function chat(
  context: BackendContext,
  request: Request,
  route: Extract<Route, { name: 'chat' }>,
): Promise<Response> {
  const { flavor } = context
  const user = requireUser(context, request, 'agent:execute')
  const body = flavor.parseChat(await readBody(context, request))
  if (request.signal.aborted) return abandoned()
  const threadId = body.sessionId ?? crypto.randomUUID()
  let thread = findThread(context, threadId, route, user)
  if (thread) {
    const refusal = turnRefusal(flavor, thread)
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
  const stream = context.begin({
    thread,
    kind: 'message',
    input: { kind: 'message', message: body.message },
    userText: body.message,
    signal: request.signal,
  })
  return sseResponse(stream)
}
