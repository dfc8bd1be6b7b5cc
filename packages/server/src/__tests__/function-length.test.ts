import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

// Issue 22: the reference server is split by what it does, so that no function holds several
// concerns. A function (declaration, expression, arrow, method or accessor) spans from its first
// line to its last, the functions nested in it included.
const maxLines = 120
const src = fileURLToPath(new URL('..', import.meta.url))

/** The non-test TypeScript files below `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === '__tests__' ? [] : sourceFiles(path)
    return /\.tsx?$/.test(entry.name) && !/\.test(-d)?\.tsx?$/.test(entry.name) ? [path] : []
  })
}

interface Span {
  where: string
  lines: number
}

/** Every function of `file`, with its length in lines. */
function functionSpans(file: string, text: string): Span[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const spans: Span[] = []
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : ownerName(node)
      spans.push({ where: `${file}:${first + 1} ${name}`, lines: last - first + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return spans
}

/** The name an anonymous function is bound to (`const name = () => …`, `name: () => …`). */
function ownerName(node: ts.Node): string {
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) {
    return parent.name.getText()
  }
  return '(anonymous)'
}

describe('function length [R-SERVER-FUNCTION-LENGTH]', () => {
  it('finds the functions of a file and measures them (the check itself works)', () => {
    const body = Array.from({ length: 130 }, (_, n) => `  const x${n} = ${n}`).join('\n')
    const spans = functionSpans(
      'sample.ts',
      `export function long() {\n${body}\n  const inner = () => 1\n}\nconst short = () => 2\n`,
    )
    expect(spans.map(({ where, lines }) => [where, lines])).toEqual([
      ['sample.ts:1 long', 133],
      ['sample.ts:132 inner', 1],
      ['sample.ts:134 short', 1],
    ])
  })

  it(`no function in packages/server/src (tests aside) is longer than ${maxLines} lines`, () => {
    const files = sourceFiles(src)
    expect(files.length).toBeGreaterThan(10)
    const tooLong = files
      .flatMap((file) => functionSpans(relative(src, file), readFileSync(file, 'utf8')))
      .filter(({ lines }) => lines > maxLines)
      .map(({ where, lines }) => `${where}: ${lines} lines`)
    expect(tooLong).toEqual([])
  })
})
