import {
  createMinimalPreviewChatClient,
  type PreviewChatClient,
  type PreviewChatClientOptions,
} from './client'
import { broadcastChannelRelay, tabRelay } from './effects/tabRelay'
import { throttleState } from './platform/throttle'
import { releasedPlatform } from './released'
import { ssePush, websocketPush, type PushAdapter } from './wire/pushSource'

/**
 * The default push channel: `ssePush()` when the client sends `headers` (a browser WebSocket
 * cannot carry them), else `websocketPush()` where `WebSocket` exists, else none (sessions poll).
 */
const defaultPush: PushAdapter = (context) =>
  context.headers
    ? ssePush()(context)
    : typeof globalThis.WebSocket === 'function'
      ? websocketPush()(context)
      : null

/**
 * The client an app makes once, outside React: `createPreviewChatClient({ baseUrl, scope })`.
 * Out of the box it has a push channel (`websocketPush()`, or `ssePush()` with `headers`), the
 * tab relay (`broadcastChannelRelay()`), the frame throttle (`throttleState`) and the released
 * n8n 2.41's part (`releasedPlatform()`); pass `false` to leave one out. To bundle only the adapters you pass, use `createMinimalPreviewChatClient`.
 */
export function createPreviewChatClient(options: PreviewChatClientOptions = {}): PreviewChatClient {
  return createMinimalPreviewChatClient({
    ...options,
    push: options.push ?? defaultPush,
    relay:
      options.relay === undefined
        ? broadcastChannelRelay()
        : options.relay && tabRelay(options.relay),
    throttle: options.throttle ?? throttleState,
    released: options.released ?? releasedPlatform(),
  })
}
