export * from './events'
export * from './push'
export * from './rest'
export * from './requests'
export * from './ids'
export * from './queue'
export * from './capabilities'
export type { ParseResult } from './result'
export { createSnapshotReuse, parseHistorySnapshot } from './snapshot'
export { completeReleasedSnapshot } from './released'
export type {
  ChildStep,
  ChildTrace,
  CompleteSnapshot,
  ExecutionStatus,
  FilePart,
  HistorySnapshot,
  Message,
  MessagePart,
  ReasoningPart,
  ReasoningSegment,
  SnapshotReuse,
  Suspension,
  TextPart,
  Timestamp,
  ToolCallPart,
  WireMessage,
  WireSnapshot,
} from './snapshot'
