/**
 * `@preview-chat/core/internal`: the engine's parts, shared by the reference server, the MSW kit
 * and the tests so that there is one implementation of each (the turn-event fold, the SSE reader,
 * the reducer). Not covered by semver: it changes with the engine.
 */
export { backoffDelay } from './engine/backoff'
export {
  browserResumeSignal,
  defaultDraftStorage,
  safeDraftStorage,
} from './platform/environment'
export { inBandError, toPreviewChatError } from './wire/contract/errors'
export { createHistoryQuery } from './effects/historyQuery'
export { lingering } from './effects/linger'
export type { Lingering } from './effects/linger'
export { followUp, IDLE_READ_RETRIES, nextDeadline, nextRead } from './engine/schedule'
export { readSse } from './wire/sse'
export type { SseEnd } from './wire/sse'
export {
  selectActiveExecutionId,
  selectOpenSuspensions,
  selectSessionState,
  selectStatus,
} from './engine/select'
export { initialEngineState, reduce } from './engine/state'
export type {
  EngineAction,
  EngineConfig,
  EngineState,
  OwnTurn,
  ReadState,
  StopState,
} from './engine/state'
export { composeTranscript, markTruncated, recordCovers, recordSupersedes } from './engine/transcript'
export { createTransport, readTurnStream, resolveHeaders } from './wire/transport'
export type { Transport, TurnRequest, TurnStreamEnd } from './wire/transport'
export {
  applyTurnEvent,
  applyTurnEvents,
  childTraceChars,
  DEFAULT_DELEGATION_CHAR_LIMIT,
  recordedParts,
  startTurn,
  turnMessages,
} from './engine/fold'
export type { LiveTurn, TurnOptions } from './engine/fold'
