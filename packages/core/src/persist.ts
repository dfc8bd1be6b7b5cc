/**
 * `@preview-chat/core/persist`: transcripts kept across a reload, opt-in, in its own entry so that
 * an app that does not use it does not bundle it.
 */
export { persistTranscripts } from './effects/persistence'
export type { PersistTranscriptsOptions, TranscriptPersistence } from './effects/persistence'
