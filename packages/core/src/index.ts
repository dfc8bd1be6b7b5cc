/**
 * `@preview-chat/core`: what an app uses. Wire types and parsers live in
 * `@preview-chat/core/contract`; the engine's parts (the reducer, the fold, the SSE reader), for
 * the reference server and the MSW kit, in `@preview-chat/core/internal`, which follows no semver.
 */
export { createPreviewChatClient, historyQueryKey } from './client'
export type { PreviewChatClient, PreviewChatClientOptions, SessionOptions } from './client'
export type { DraftStorage, ResumeSignal, Timers } from './environment'
export { PreviewChatError } from './errors'
export type { PreviewChatErrorCode, PreviewChatErrorOptions } from './errors'
export type { SubmitResult } from './ownTurn'
export { ssePushSource, websocketPushSource } from './pushSource'
export type { PushListener, PushSource, ReconnectOptions, WebSocketLike } from './pushSource'
export { PreviewChatSession } from './session'
export type { ReadonlyStore } from './effects'
export type { SessionState, SessionStatus } from './select'
export type { ServerTraits } from './state'
export type { StopResult } from './stop'
export { broadcastChannelRelay } from './tabRelay'
export type { RelayMessage, TabRelay } from './tabRelay'
export { throttleState } from './throttle'
export type { ThrottleOptions } from './throttle'
export type { HeadersOption, ThreadKey } from './transport'
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
