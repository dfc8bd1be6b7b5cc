/**
 * What a message of the packages carries after its short sentence (issue 46: production builds
 * carry codes, not prose): in development builds the long explanation, and always the link to the
 * message's entry in the docs (site/docs/errors.md, one heading per id). The explanations are read
 * only while `process.env.NODE_ENV !== 'production'`, which Vite, Next.js and webpack define, so a
 * production bundle drops them (`pnpm check:size` measures in production mode; a test bundles it
 * and looks for the prose). The packages' dist keeps `process.env.NODE_ENV` as written: the app's
 * bundler decides; a page with neither a bundler nor a `process` gets the short messages.
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
  let more = ''
  // A page without a bundler (plain ESM from a CDN) has no `process`: the read throws there, and
  // the message goes without its explanation rather than crash. The read stays bare inside the
  // `try`: a bundler replaces it, and a production build folds the branch away (no prose kept).
  try {
    if (process.env.NODE_ENV !== 'production')
      more = ` ${(explanations[id] as (...values: unknown[]) => string)(...args)}`
  } catch {
    // No `process` and no bundler's replacement: not a development build that says so.
  }
  return `${more}${seeEntry(id)}`
}

/** ` See <link>`: the link to an entry of the docs page, a message id's or an error code's. */
export const seeEntry = (anchor: string) => ` See ${messagesPage}#${anchor}`
