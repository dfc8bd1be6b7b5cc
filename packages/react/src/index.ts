export { PreviewChatProvider, usePreviewChatClient } from './PreviewChatProvider'
export type { PreviewChatProviderProps } from './PreviewChatProvider'
export { usePreviewChat, usePreviewChatSelector } from './usePreviewChat'
export type { PreviewChat, UsePreviewChatOptions } from './usePreviewChat'
// The engine's API, so that an app needs one import.
export {
  createPreviewChatClient,
  historyQueryKey,
  PreviewChatError,
  ssePushSource,
  websocketPushSource,
} from '@preview-chat/core'
export type {
  ChildTrace,
  HistorySnapshot,
  Message,
  MessagePart,
  PreviewChatClient,
  PreviewChatClientOptions,
  PreviewChatErrorCode,
  PushSource,
  SessionState,
  SessionStatus,
  StopResult,
  SubmitResult,
  Suspension,
  ToolCallPart,
} from '@preview-chat/core'
