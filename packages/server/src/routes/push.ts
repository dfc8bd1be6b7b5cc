import type { ServerPushMessage } from '@preview-chat/core/contract'
import type { BackendContext } from '../context'
import { admitPushUser } from '../push-admission'
import { createSseStream, pushQueueLimitBytes, sseResponse } from '../sse'

/** `GET /push` as SSE: the user's push channel (the Node host also serves it as a WebSocket). */
export async function push(context: BackendContext, request: Request): Promise<Response> {
  const { flavor, pushStreams } = context
  const admission = admitPushUser(await context.identify(request, 'push'), context.unauthorized)
  if (admission.kind === 'refused') throw admission.error
  const { user } = admission
  const refusal = flavor.pushStreamRefusal(request)
  if (refusal) return refusal
  let unsubscribe = () => {}
  const end = () => {
    unsubscribe()
    pushStreams.delete(end)
    stream.close()
  }
  const stream = createSseStream({
    pingMs: context.pingMs,
    timers: context.timers,
    onCancel: end,
    maxQueuedBytes: pushQueueLimitBytes,
    onOverflow: end,
  })
  unsubscribe = context.subscribe(user.id, (message: ServerPushMessage) => stream.send(message))
  pushStreams.add(end)
  request.signal.addEventListener('abort', end, { once: true })
  return sseResponse(stream, flavor.pushStreamHeaders)
}
