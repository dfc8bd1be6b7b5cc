'use client'

export { usePreviewChatRuntime } from './usePreviewChatRuntime'
export type { UsePreviewChatRuntimeOptions } from './usePreviewChatRuntime'
export { useComposerDraft } from './useComposerDraft'
export { PreviewChatNotSentError } from './notSentError'
export type { NotSentCode } from './notSentError'
export { convertMessage, convertPart, isSuspended, messageStatus } from './convert'
