/**
 * `@preview-chat/react/persist`: `persistTranscripts` of `@preview-chat/core/persist`, for an app
 * that depends on this package only. Its own entry: an app that does not keep transcripts does
 * not bundle it.
 */
export { persistTranscripts } from '@preview-chat/core/persist'
export type { PersistTranscriptsOptions, TranscriptPersistence } from '@preview-chat/core/persist'
