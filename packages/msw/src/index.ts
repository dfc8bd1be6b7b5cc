/**
 * The preview-chat reference backend mounted in MSW handlers, with scenario controls for tests and
 * stories. Imports only from `msw` (never `msw/node`), so the same handlers run in Node and in the
 * browser's service worker. The Vitest wiring lives in `@preview-chat/msw/vitest`.
 */
export { createPreviewChatHandlers } from './handlers'
export type { PreviewChatHandlersOptions, PreviewChatMock, ReadFailure } from './handlers'
export { createPersistentPreviewChat } from './persist'
export type {
  PersistentPreviewChatMock,
  PersistentPreviewChatOptions,
  PreviewChatStorage,
} from './persist'
export { memoryQueueStore, readQueue, seedQueue } from './queue'
export type { QueueKeyOptions, SeedQueueOptions, StoredQueue, StoredQueuedMessage } from './queue'
export type { SeededRunningTurn, SeededSuspension, SeededThread, Seeder, SeedOptions } from './seed'
export type { CutMode, CutStreamOptions } from './streamCut'
export type { TurnGate } from './turnGate'
