import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { PreviewChatError } from '../wire/contract/errors'
import { explain, messagesPage } from '../wire/contract/explain'
import { explanations } from '../wire/contract/explanations'

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8')
/** The headings of the docs page of the messages (their anchors are the ids). */
const headings = new Set(
  [...read('../../../../site/docs/errors.md').matchAll(/^#{2,4} (\S+)$/gm)].map((m) => m[1]),
)
/** Every `PreviewChatErrorCode`, from its declaration. */
const codes = [
  .../export type PreviewChatErrorCode =([^]*?)\n\n/
    .exec(read('../wire/contract/errors.ts'))![1]!
    .matchAll(/'(\w+)'/g),
].map((m) => m[1])

describe('the docs page of the messages (site/docs/errors.md)', () => {
  it('[R-ERRORS-PROD-CODES] has an entry for every error code and every message id', () => {
    expect(codes.length).toBeGreaterThan(10)
    const ids = [...codes, ...Object.keys(explanations)]
    expect(ids.filter((id) => !headings.has(id))).toEqual([])
  })

  it("[R-ERRORS-PROD-CODES] says what each entry's explanation says", () => {
    const page = read('../../../../site/docs/errors.md')
    for (const [id, explanation] of Object.entries(explanations)) {
      const text = (explanation as (...args: unknown[]) => string)('\u0000').split('\u0000')[0]!
      const words = text.slice(0, 30).replace(/</g, '&lt;').replace(/[{]/g, '&#123;')
      expect(page, id).toContain(words)
    }
  })

  it('[R-ERRORS-PROD-CODES] a message links to its entry, and explains itself in development', () => {
    expect(explain('empty-message')).toBe(
      ` ${explanations['empty-message']()} See ${messagesPage}#empty-message`,
    )
    const error = new PreviewChatError(
      'invalid_request',
      `The message is empty.${explain('empty-message')}`,
    )
    expect(error.message).toMatch(/#empty-message$/)
  })
})

describe('the messages on a page without a bundler', () => {
  it('[R-ERRORS-NO-BUNDLER] explain() runs where there is no `process` (plain ESM from a CDN)', async () => {
    // The module as a CDN serves it: bundled, `process.env.NODE_ENV` left as written, run where
    // no `process` global exists (a browser page without a bundler).
    const { build } = await import('esbuild')
    const built = await build({
      entryPoints: [fileURLToPath(new URL('../wire/contract/explain.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'iife',
      globalName: 'messages',
      // Not `browser`: esbuild would define `process.env.NODE_ENV` itself, as a bundler does.
      platform: 'neutral',
    })
    const sandbox: { messages?: { explain: typeof explain } } = {}
    runInNewContext(built.outputFiles[0]!.text, sandbox)
    expect('process' in sandbox).toBe(false)
    expect(sandbox.messages!.explain('empty-message')).toBe(` See ${messagesPage}#empty-message`)
  })
})
