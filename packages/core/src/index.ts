export * from './contract'
export { createPreviewChatClient, historyQueryKey } from './client'
export type { PreviewChatClient, PreviewChatClientOptions, SessionOptions } from './client'
export { backoffDelay, browserResumeSignal, defaultDraftStorage } from './environment'
export type { DraftStorage, ResumeSignal, Timers } from './environment'
export { PreviewChatError } from './errors'
export type { PreviewChatErrorCode, PreviewChatErrorOptions } from './errors'
export { ssePushSource, websocketPushSource } from './pushSource'
export type { PushListener, PushSource, ReconnectOptions, WebSocketLike } from './pushSource'
export { PreviewChatSession } from './session'
export type { StopResult, SubmitResult } from './session'
export { broadcastChannelRelay } from './tabRelay'
export type { RelayMessage, TabRelay } from './tabRelay'
export { throttleState } from './throttle'
export type { StateSource, ThrottleOptions } from './throttle'
export { reduce, initialEngineState, selectSessionState, selectStatus } from './state'
export type { EngineAction, EngineState, SessionState, SessionStatus } from './state'
export { composeTranscript, markTruncated, recordCovers, recordSupersedes } from './transcript'
export type { HeadersOption, ThreadKey } from './transport'
export {
  applyTurnEvent,
  applyTurnEvents,
  childTraceChars,
  DEFAULT_DELEGATION_CHAR_LIMIT,
  startTurn,
  turnMessages,
} from './turn'
export type { LiveTurn, TurnOptions } from './turn'
