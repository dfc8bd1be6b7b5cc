import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { runInNewContext } from 'node:vm'
import ts from 'typescript'
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

/** The source files of the packages that run in a browser (their tests left out). */
const sources = ['core', 'react', 'assistant-ui'].flatMap((name) => {
  const dir = new URL(`../../../${name}/src/`, import.meta.url)
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((path) => /\.tsx?$/.test(path) && !/(^|\/)__tests__\/|\.test\.tsx?$/.test(path))
    .map((path) => ({
      path: `${name}/src/${path}`,
      text: readFileSync(new URL(path, dir), 'utf8'),
    }))
})

/**
 * Each place a message is written: the message of a `new PreviewChatError(code, message)`, of an
 * `errorRecord(code, message)` and of a `{ type: 'warn', message }` command; a message passed
 * through (`error.message`, a variable) is another place's.
 */
function messagesOf(path: string, text: string) {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found: { at: string; message: ts.Expression }[] = []
  const at = (node: ts.Node) =>
    `${path}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
  const visit = (node: ts.Node) => {
    if (ts.isNewExpression(node) && node.expression.getText() === 'PreviewChatError') {
      const message = node.arguments?.[1]
      if (message) found.push({ at: at(node), message })
    } else if (ts.isCallExpression(node) && node.expression.getText() === 'errorRecord') {
      const message = node.arguments[1]
      if (message) found.push({ at: at(node), message })
    } else if (ts.isObjectLiteralExpression(node)) {
      const property = (name: string) =>
        node.properties.find(
          (each): each is ts.PropertyAssignment =>
            ts.isPropertyAssignment(each) && each.name.getText() === name,
        )?.initializer
      const type = property('type')
      const message = property('message')
      if (type && ts.isStringLiteral(type) && type.text === 'warn' && message)
        found.push({ at: at(node), message })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

/** Whether the expression holds words of its own, and whether it calls `explain()`/`seeEntry()`. */
function wordsAndLink(expression: ts.Expression) {
  let words = false
  let link = false
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
      words ||= /[a-z]/i.test(node.text)
    if (ts.isTemplateExpression(node))
      words ||= [node.head, ...node.templateSpans.map((span) => span.literal)].some((part) =>
        /[a-z]/i.test(part.text),
      )
    if (ts.isCallExpression(node) && /^(explain|seeEntry)$/.test(node.expression.getText()))
      link = true
    ts.forEachChild(node, visit)
  }
  visit(expression)
  return { words, link }
}

describe('every message the browser packages write (core, react, assistant-ui)', () => {
  it('[R-ERRORS-PROD-CODES] links to its entry: each error and warning written in the source calls explain()', () => {
    const written = sources.flatMap(({ path, text }) => messagesOf(path, text))
    // The places are found: a scan that found none would pass on anything.
    expect(written.length).toBeGreaterThan(40)
    const unlinked = written
      .filter(({ message }) => {
        const { words, link } = wordsAndLink(message)
        return words && !link
      })
      .map(({ at, message }) => `${at}: ${message.getText().slice(0, 80)}`)
    expect(unlinked).toEqual([])
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
