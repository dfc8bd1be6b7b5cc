/**
 * `@preview-chat/core/internal`: the engine's parts, shared by the reference server, the MSW kit
 * and the tests so that there is one implementation of each (the turn-event fold, the SSE reader,
 * the reducer). Not covered by semver: it changes with the engine.
 */
export {
  backoffDelay,
  browserResumeSignal,
  defaultDraftStorage,
  safeDraftStorage,
} from './environment'
export { inBandError, toPreviewChatError } from './errors'
export { createHistoryQuery } from './historyQuery'
export { lingering } from './linger'
export type { Lingering } from './linger'
export { followUp, IDLE_READ_RETRIES, nextDeadline, nextRead } from './schedule'
export { readSse } from './sse'
export type { SseEnd } from './sse'
export {
  selectActiveExecutionId,
  selectOpenSuspensions,
  selectSessionState,
  selectStatus,
} from './select'
export { initialEngineState, reduce } from './state'
export type {
  EngineAction,
  EngineConfig,
  EngineState,
  OwnTurn,
  ReadState,
  StopState,
} from './state'
export { composeTranscript, markTruncated, recordCovers, recordSupersedes } from './transcript'
export { createTransport, readTurnStream, resolveHeaders } from './transport'
export type { Transport, TurnRequest, TurnStreamEnd } from './transport'
export {
  applyTurnEvent,
  applyTurnEvents,
  childTraceChars,
  DEFAULT_DELEGATION_CHAR_LIMIT,
  recordedParts,
  startTurn,
  turnMessages,
} from './turn'
export type { LiveTurn, TurnOptions } from './turn'
