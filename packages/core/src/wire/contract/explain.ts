/**
 * What a message of the packages carries after its short sentence (issue 46: production builds
 * carry codes, not prose): in development builds the long explanation, and always the link to the
 * message's entry in the docs (site/docs/errors.md, one heading per id). The explanations are read
 * only while `process.env.NODE_ENV !== 'production'`, which Vite, Next.js and webpack define, so a
 * production bundle drops them (`pnpm check:size` measures in production mode; a test bundles it
 * and looks for the prose). The packages' dist keeps `process.env.NODE_ENV` as written: the app's
 * bundler decides.
 */
import { explanations } from './explanations'

/** The id of a message: its anchor on the docs page. */
export type MessageId = keyof typeof explanations

/** The docs page of the packages' messages; `#<id>` is a message's entry. */
export const messagesPage =
  'https://github.com/preview-chat/preview-chat/blob/main/site/docs/errors.md'

/**
 * ` <explanation> See <link>` in development, ` See <link>` in production: appended to a
 * message's short sentence.
 */
export function explain<K extends MessageId>(
  id: K,
  ...args: Parameters<(typeof explanations)[K]>
): string {
  const more =
    process.env.NODE_ENV !== 'production'
      ? ` ${(explanations[id] as (...values: unknown[]) => string)(...args)}`
      : ''
  return `${more} See ${messagesPage}#${id}`
}
