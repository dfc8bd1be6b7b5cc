/**
 * `@preview-chat/core`: what an app uses. Wire types and parsers live in
 * `@preview-chat/core/contract`; the engine's parts that the reference server and the MSW kit
 * share (the fold, the SSE reader), in `@preview-chat/core/internal`, which follows no semver.
 */
export { createPreviewChatClient } from './defaults'
export { createMinimalPreviewChatClient, historyQueryKey } from './client'
export type {
  MinimalPreviewChatClientOptions,
  PreviewChatClient,
  PreviewChatClientOptions,
  SessionOptions,
} from './client'
export type { PersistTranscriptsOptions, TranscriptPersistence } from './effects/persistence'
export type { DraftStorage, ResumeSignal, Timers } from './platform/environment'
export { PreviewChatError } from './wire/contract/errors'
export type { PreviewChatErrorCode, PreviewChatErrorOptions } from './wire/contract/errors'
export { ssePush, ssePushSource, websocketPush, websocketPushSource } from './wire/pushSource'
export type {
  PushAdapter,
  PushContext,
  PushListener,
  PushSource,
  ReconnectOptions,
  WebSocketLike,
} from './wire/pushSource'
export { PreviewChatSession } from './effects/session'
export type { InspectedStep } from './effects/session'
export { noThread, noThreadState } from './effects/noThread'
export type { SessionActions } from './effects/noThread'
export type { ReadonlyStore } from './effects/context'
export type { SessionState, SessionStatus } from './engine/select'
// The engine's own types (`EngineState`, `EngineAction`, `Command`, …: what `getEngineState()` and
// `inspect()` hand the devtools) are in `@preview-chat/core/internal`, outside semver.
export type { ServerTraits, StopResult, SubmitResult, TurnEnding } from './engine/model'
// What a `TabRelay` of the app's own carries.
export type { RelayMessage } from './engine/relay'
export { broadcastChannelRelay, tabRelay } from './effects/tabRelay'
export { releasedPlatform } from './released'
export type { ReleasedPlatform } from './released'
export type { RelayAdapter, RelayContext, RelayWithPart, TabRelay } from './effects/tabRelay'
export { throttleState } from './platform/throttle'
export type { Throttle } from './client'
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
