export * from './events'
export * from './push'
export * from './rest'
export * from './requests'
export * from './ids'
export * from './queue'
export * from './capabilities'
export type { ParseResult } from './result'
export { createSnapshotReuse, parseHistorySnapshot } from './snapshot'
export type {
  ChildStep,
  ChildTrace,
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
} from './snapshot'
