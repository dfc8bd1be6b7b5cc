// The presentational parts of the app: prop-driven, no data fetching, so that stories and tests
// render them with plain props.
export { Composer } from './Composer'
export type { ComposerProps } from './Composer'
export { ErrorBanner } from './ErrorBanner'
export type { ErrorBannerKind, ErrorBannerProps } from './ErrorBanner'
export { MessageView } from './Message'
export type { MessageViewProps } from './Message'
export {
  ChildTraceView,
  PartView,
  ReasoningPartView,
  TextPartView,
  ToolCallPartView,
} from './parts'
export type { SuspensionActions } from './parts'
export { QueueList } from './QueueList'
export type { QueueListProps } from './QueueList'
export { StatusBar } from './StatusBar'
export type { ConnectionStatus, StatusBarProps } from './StatusBar'
export { ThreadList } from './ThreadList'
export type { ThreadListProps, ThreadSummary } from './ThreadList'
export { Transcript } from './Transcript'
export type { TranscriptProps } from './Transcript'
export { UserPicker } from './UserPicker'
export type { UserPickerProps } from './UserPicker'
