/**
 * The reference backend of the preview-chat contract. This entry is browser-safe (no `node:`
 * imports), so `@preview-chat/msw` can mount the same backend in a service worker; the Node host
 * lives in `@preview-chat/server/node`.
 */
export { createPreviewChatBackend } from './backend'
export type {
  PreviewChatBackend,
  PreviewChatBackendOptions,
  PreviewChatLimits,
  PreviewChatInspection,
  RecordingLogEntry,
  RequestLogEntry,
} from './backend'
export { scriptedAgent } from './agent'
export type { AgentContext, AgentInput, AgentOutcome, PreviewChatAgent } from './agent'
export { createMemoryStore, threadKey } from './store/memory'
export type { MemoryStore, MemoryStoreState } from './store/memory'
export { snapshotOf } from './store/snapshot'
export type {
  AdmissionRefusal,
  AdmissionResult,
  Admitted,
  Enqueueing,
  EnqueueResult,
  ExecutionDraft,
  ExecutionEnd,
  ExecutionRecord,
  PreviewChatStore,
  QueueChange,
  QueueChangeResult,
  QueueItemRecord,
  ResumeResult,
  RunCancellation,
  RunRecord,
  RunResumption,
  TakenUp,
  ThreadKey,
  ThreadRecord,
  ThreadScope,
  TurnAdmission,
} from './store/types'
export { createMemoryBus } from './bus/memory'
export type { CancelHandler, PreviewChatBus, ServerPushListener } from './bus/types'
export type { PushListener } from './push'
export { builtInUsers, userCookieName } from './users'
export type { PreviewChatAuthenticate, PreviewChatIdentity, PreviewChatUser, Scope } from './users'
export { PreviewChatConfigError } from './config-error'
export { consoleLogger } from './log'
export type { PreviewChatLogEntry, PreviewChatLogger } from './log'
export type { PreviewChatConfigErrorCode } from './config-error'
export { timerSleep } from './sleep'
export type { Sleep } from './sleep'
export { maxBodyBytes } from './http'
export type { RestError, RestErrorCode } from './http'
export type { FlavorName, PushBackend, PushSocketAdmission } from './flavor'
export type { RouteName } from './routes/match'
