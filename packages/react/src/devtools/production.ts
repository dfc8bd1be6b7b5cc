'use client'

/**
 * `@preview-chat/react/devtools/production`: the panel in every build, for a staging build or a
 * Storybook that should show it (the default entry renders it in development only).
 */
export { PreviewChatDevtools } from './PreviewChatDevtools'
export type { DevtoolsPosition, PreviewChatDevtoolsProps } from './PreviewChatDevtools'
