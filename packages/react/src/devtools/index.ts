'use client'

/**
 * `@preview-chat/react/devtools`: the panel while `process.env.NODE_ENV` is `'development'`, and a
 * component that renders nothing otherwise. Bundlers replace `process.env.NODE_ENV`, so a
 * production bundle keeps only the empty component and drops the panel's module (the package has
 * no side effects), as `@tanstack/react-query-devtools` does. To show it in any build, import
 * `@preview-chat/react/devtools/production`.
 */
import * as devtools from './PreviewChatDevtools'

export type { DevtoolsPosition, PreviewChatDevtoolsProps } from './PreviewChatDevtools'

export const PreviewChatDevtools: typeof devtools.PreviewChatDevtools =
  process.env.NODE_ENV !== 'development'
    ? function PreviewChatDevtools() {
        return null
      }
    : devtools.PreviewChatDevtools
