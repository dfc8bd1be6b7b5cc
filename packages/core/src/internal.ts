/**
 * `@preview-chat/core/internal`: the engine's parts that the reference server, the MSW kit and the
 * bench share with the client, so that there is one implementation of each (the turn-event fold,
 * the SSE reader, the transcript, the transport). Not covered by semver: it changes with the
 * engine. The reducer and its model are reached by this package's own tests only.
 */
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
/**
 * The engine's own state, actions and commands (`session.getEngineState()`, `session.inspect()`),
 * for devtools and tests: their shape follows the engine and may change in a minor version;
 * render from `SessionState`.
 */
export type {
  Command,
  EngineAction,
  EngineState,
  OwnTurn,
  ReadState,
  StopState,
} from './engine/model'

/** Traces of the engine's runs (`recordTrace(session)`): kept as JSON, replayed through the reducer. */
export { recordTrace } from './effects/recordTrace'
export { parseTrace, replayTrace, TraceError, TRACE_VERSION } from './engine/trace'
export { ACTION_TYPES } from './engine/shapes'
/**
 * The queue's part of the engine (`queue()` brings it); `replayTrace(trace,
 * reducerWith([...everyPart, queuePart]))` replays a run that had a queue (and the parts
 * `createPreviewChatClient` gives), each step ended by the engine's one post-step. `reduce` is the
 * engine with every part but the queue's.
 */
export { queuePart } from './engine/queue/reduce'
export { decide, decideWith, everyPart, postStep, reduce, reducerWith } from './engine/reduce'
/** The tab relay's part of the engine (`EnginePart`): what a client with a relay assembles in. */
export { relayPart } from './engine/slices/relay'
/** The released n8n 2.41's part of the engine: what a client with `releasedPlatform()` assembles in. */
export { releasedPart } from './engine/slices/released'
export type { EnginePart, Handler } from './engine/model'
export type { EngineTrace, TraceDivergence, TraceStep } from './engine/trace'
export { composeTranscript, markTruncated, recordCovers } from './engine/transcript'
export { defaultTimers } from './platform/environment'
export { readSse } from './wire/sse'
export type { SseEnd } from './wire/sse'
export { createTransport, readTurnStream } from './wire/transport'
export type { Transport, TurnStreamEnd } from './wire/transport'
/** A message's explanation (development builds) and docs link: for the other packages' messages. */
export { explain, messagesPage, type MessageId } from './wire/contract/explain'
