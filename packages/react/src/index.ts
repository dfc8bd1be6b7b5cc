'use client'

export { PreviewChatProvider, usePreviewChatClient } from './PreviewChatProvider'
export type { PreviewChatProviderProps } from './PreviewChatProvider'
export { usePreviewChat, usePreviewChatSelector } from './usePreviewChat'
export type { PreviewChat, UsePreviewChatOptions } from './usePreviewChat'
export { toolCallStatus } from './toolCallStatus'
export type { ToolCallStatus } from './toolCallStatus'
// The engine's API, so that an app needs one import.
export {
  broadcastChannelRelay,
  createMinimalPreviewChatClient,
  createPreviewChatClient,
  historyQueryKey,
  noThread,
  noThreadState,
  PreviewChatError,
  releasedPlatform,
  ssePush,
  ssePushSource,
  tabRelay,
  throttleState,
  websocketPush,
  websocketPushSource,
} from '@preview-chat/core'
export type {
  ChildStep,
  ChildTrace,
  DraftStorage,
  ExecutionStatus,
  FilePart,
  HeadersOption,
  HistorySnapshot,
  Message,
  MinimalPreviewChatClientOptions,
  MessagePart,
  PreviewChatClient,
  PreviewChatClientOptions,
  PreviewChatErrorCode,
  PreviewChatSession,
  PushMessage,
  PushAdapter,
  PushContext,
  PushSource,
  ReasoningPart,
  ReasoningSegment,
  ReleasedPlatform,
  SessionState,
  SessionStatus,
  StopResult,
  SubmitResult,
  Suspension,
  RelayAdapter,
  RelayContext,
  RelayWithPart,
  TabRelay,
  TextPart,
  Throttle,
  ThrottleOptions,
  ThreadKey,
  Timestamp,
  ToolCallPart,
} from '@preview-chat/core'
