// examples/readme-code/extract.mjs on a planted repository: which blocks it hands to `tsc`, and
// that a block showing a file (`file="…"`) no tsconfig includes fails the extraction.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const script = fileURLToPath(new URL('../../examples/readme-code/extract.mjs', import.meta.url))
let repo: string

const write = (path: string, text: string) => {
  mkdirSync(dirname(join(repo, path)), { recursive: true })
  writeFileSync(join(repo, path), text)
}
const extract = () => {
  const run = spawnSync('node', [script, '--root', repo, '--out', join(repo, 'generated')], {
    encoding: 'utf8',
  })
  return { code: run.status, out: run.stdout, err: run.stderr }
}
const generated = () => readdirSync(join(repo, 'generated')).sort()
const fence = (tag: string, code: string) => `\`\`\`${tag}\n${code}\n\`\`\`\n`

beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'preview-chat-readme-code-'))
  write('README.md', '# demo\n')
  write('tsconfig.base.json', '{ "compilerOptions": { "strict": true } }\n')
  write('site/tsconfig.json', '{ "extends": "../tsconfig.base.json", "include": ["examples"] }\n')
  write('site/examples/App.tsx', 'export const App = () => null\n')
  write('site/other/Loose.tsx', 'export const Loose = () => null\n')
})
afterEach(() => {
  rmSync(repo, { recursive: true, force: true })
})

describe('examples/readme-code/extract.mjs', () => {
  it("takes the decision records' blocks (docs/decisions/), with every TS and JS fence tag", () => {
    write(
      'docs/decisions/a-record.md',
      [
        '# A record',
        fence('ts', 'const a: number = 1'),
        fence('typescript', 'const b: number = 2'),
        fence('tsx', 'const c = <div />'),
        fence('js', 'export default { a: 1 }'),
        fence('jsx', 'const d = <div />'),
        fence('sh', 'pnpm test'),
        fence('mermaid', 'stateDiagram-v2'),
      ].join('\n'),
    )
    const run = extract()
    expect(run.err).toBe('')
    expect(run.code).toBe(0)
    expect(generated()).toEqual([
      'docs_decisions_a-record_md_1.ts',
      'docs_decisions_a-record_md_2.ts',
      'docs_decisions_a-record_md_3.tsx',
      'docs_decisions_a-record_md_4.js',
      'docs_decisions_a-record_md_5.jsx',
    ])
    expect(readFileSync(join(repo, 'generated/docs_decisions_a-record_md_2.ts'), 'utf8')).toBe(
      '// docs/decisions/a-record.md, block 2\nconst b: number = 2\nexport {}\n',
    )
  })

  it('accepts a shown file that a tsconfig includes, and leaves it to that tsconfig', () => {
    write('site/docs/guide/a.mdx', fence('tsx file="../../examples/App.tsx"', ''))
    const run = extract()
    expect(run.code).toBe(0)
    expect(generated()).toEqual([])
  })

  it('fails on a shown file that no tsconfig includes, or that is not there', () => {
    write(
      'site/docs/guide/a.mdx',
      [
        fence('tsx file="../../other/Loose.tsx"', ''),
        fence('ts file="../../examples/Gone.ts"', ''),
      ].join('\n'),
    )
    const run = extract()
    expect(run.code).toBe(1)
    expect(run.err).toContain(
      'site/docs/guide/a.mdx, block 1: file="../../other/Loose.tsx" shows site/other/Loose.tsx, which no tsconfig of the repository includes',
    )
    expect(run.err).toContain(
      'site/docs/guide/a.mdx, block 2: file="../../examples/Gone.ts" names no file',
    )
  })

  it('does not count a base config (no include, no files) as including everything', () => {
    write('tsconfig.json', '{ "extends": "./tsconfig.base.json" }\n')
    write('site/docs/guide/a.mdx', fence('tsx file="../../other/Loose.tsx"', ''))
    expect(extract().code).toBe(1)
  })
})
