/** The Node host of the reference backend: HTTP, SSE and WebSocket push. */
export { startPreviewChatServer } from './host'
export type { PreviewChatServer, StartPreviewChatServerOptions } from './host'
export { attachWebSocketPush } from './push'
export type { AttachWebSocketPushOptions } from './push'
export { toFetchRequest, writeFetchResponse } from './request'
