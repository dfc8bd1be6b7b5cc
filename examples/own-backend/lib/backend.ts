import { createPreviewChatBackend, type PreviewChatBackend } from '@preview-chat/server'
import { agent } from './agent'
import { authenticate } from './session'

/**
 * One backend for the whole server process: it holds the running turns and the record (in
 * memory here; a store of your own for several processes). Kept on `globalThis` so that `next
 * dev`'s reloads of this module do not start a second one beside the first.
 */
const shared = globalThis as typeof globalThis & { previewChatBackend?: PreviewChatBackend }

export const backend = (shared.previewChatBackend ??= createPreviewChatBackend({
  agent,
  authenticate,
  basePath: '/rest',
}))
