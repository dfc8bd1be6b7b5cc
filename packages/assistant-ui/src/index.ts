'use client'

export { usePreviewChatRuntime } from './usePreviewChatRuntime'
export type { UsePreviewChatRuntimeOptions } from './usePreviewChatRuntime'
export { useComposerDraft } from './useComposerDraft'
export { convertMessage, convertPart, isSuspended, messageStatus } from './convert'
