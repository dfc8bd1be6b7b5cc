export * from './contract'
export { PreviewChatError } from './errors'
export type { PreviewChatErrorCode, PreviewChatErrorOptions } from './errors'
