/**
 * `@preview-chat/core`: what an app uses. Wire types and parsers live in
 * `@preview-chat/core/contract`; the engine's parts (the reducer, the fold, the SSE reader), for
 * the reference server and the MSW kit, in `@preview-chat/core/internal`, which follows no semver.
 */
export { createPreviewChatClient, historyQueryKey } from './client'
export type { PreviewChatClient, PreviewChatClientOptions, SessionOptions } from './client'
export type { DraftStorage, ResumeSignal, Timers } from './platform/environment'
export { PreviewChatError } from './wire/contract/errors'
export type { PreviewChatErrorCode, PreviewChatErrorOptions } from './wire/contract/errors'
export type { SubmitResult } from './effects/ownTurn'
export { ssePushSource, websocketPushSource } from './wire/pushSource'
export type { PushListener, PushSource, ReconnectOptions, WebSocketLike } from './wire/pushSource'
export { PreviewChatSession } from './effects/session'
export type { ReadonlyStore } from './effects/context'
export type { SessionState, SessionStatus } from './engine/select'
export type { ServerTraits } from './engine/state'
export type { StopResult } from './effects/stop'
export { broadcastChannelRelay } from './effects/tabRelay'
export type { RelayMessage, TabRelay } from './effects/tabRelay'
export { throttleState } from './platform/throttle'
export type { ThrottleOptions } from './platform/throttle'
export type { HeadersOption, ThreadKey } from './wire/transport'
// The shapes an app renders and the push messages it may relay.
export type {
  ChildStep,
  ChildTrace,
  ExecutionStatus,
  FilePart,
  HistorySnapshot,
  Message,
  MessagePart,
  PushMessage,
  ReasoningPart,
  ReasoningSegment,
  Suspension,
  TextPart,
  Timestamp,
  ToolCallPart,
} from './contract'
