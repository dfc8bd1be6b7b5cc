// Writes every TypeScript and JavaScript block (```ts, ```typescript, ```tsx, ```js, ```jsx) of the
// repository's READMEs, of docs/ (the rules, interop, every decision record: pages of the site) and
// of the docs site's own pages (site/docs/**/*.md, *.mdx) to generated/, one module each, for `tsc`
// to check against the workspace's packages (a js block as JavaScript: allowJs, checkJs).
//
// A block preceded by `<!-- example: name -->` is checked elsewhere, verbatim against the test
// that runs it (see packages/msw's readme test). A block preceded by `<!-- unchecked: why -->` (in MDX, `{/* unchecked: why */}`) is
// a file of the reader's own app that no module here can stand for (it imports the reader's
// modules, or a framework's generated route types): not type-checked, and counted with its reason
// in the summary, so that every such block is said aloud; the reason may not be empty. A site block with `file="…"` shows a file: it
// must exist and a tsconfig of the repository must include it (site/examples, the packages'
// tests, the Next example), else this fails and says which block — a shown file no `tsc` reads
// would be a snippet nothing checks.
//
//   node extract.mjs [--root <repository>] [--out <dir>]
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import ts from 'typescript'

const { values } = parseArgs({ options: { root: { type: 'string' }, out: { type: 'string' } } })
const root = resolve(values.root ?? fileURLToPath(new URL('../..', import.meta.url)))
const out = resolve(values.out ?? fileURLToPath(new URL('generated', import.meta.url)))

/** The markdown files of `dir` (relative to the root), its subfolders' too. */
const markdownUnder = (dir, pattern, skip = () => false) =>
  existsSync(join(root, dir))
    ? readdirSync(join(root, dir), { recursive: true })
        .map(String)
        .filter((name) => pattern.test(name) && !skip(name))
        .map((name) => join(dir, name).split('\\').join('/'))
        .sort()
    : []

const readmes = [
  'README.md',
  ...(existsSync(join(root, 'packages')) ? readdirSync(join(root, 'packages')) : []).map(
    (name) => `packages/${name}/README.md`,
  ),
  ...markdownUnder('docs', /\.mdx?$/),
  // The API reference is TypeDoc's output (site/prepare.mjs), not written by hand.
  ...markdownUnder('site/docs', /\.mdx?$/, (name) => name.startsWith('api/')),
]

/** The fence's tag → the generated module's extension. */
const extensions = { ts: 'ts', typescript: 'ts', tsx: 'tsx', js: 'js', jsx: 'jsx' }

/** Every file some tsconfig of the repository includes (a config naming no include/files is a base). */
let included
function includedFiles() {
  if (included) return included
  included = new Set()
  const skip = new Set(['node_modules', 'dist', 'doc_build', 'generated', 'test-results'])
  const configs = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory() && !skip.has(entry.name) && !entry.name.startsWith('.'))
        walk(join(dir, entry.name))
      else if (entry.isFile() && /^tsconfig(\.[\w-]+)?\.json$/.test(entry.name))
        configs.push(join(dir, entry.name))
    }
  }
  walk(root)
  for (const path of configs) {
    const { config } = ts.readConfigFile(path, ts.sys.readFile)
    if (!config || (!config.include && !config.files)) continue
    const parsed = ts.parseJsonConfigFileContent(config, ts.sys, dirname(path), undefined, path)
    for (const file of parsed.fileNames) included.add(resolve(file))
  }
  return included
}

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
const problems = []
let count = 0
let shownCount = 0
/** The blocks marked `<!-- unchecked: why -->`, with their reasons. */
const uncheckedBlocks = []
for (const file of readmes) {
  let text
  try {
    text = readFileSync(join(root, file), 'utf8')
  } catch {
    continue
  }
  const blocks = text.matchAll(
    /(<!-- example: \w+ -->\n+)?((?:<!-- unchecked:([^>]*)-->|\{\/\* unchecked:([^*]*)\*\/\})\n+)?^[ \t]*```(tsx?|typescript|jsx?)( [^\n]*)?\n([\s\S]*?)\n[ \t]*```/gm,
  )
  let index = 0
  for (const [, verbatim, unchecked, whyHtml, whyMdx, tag, meta, code] of blocks) {
    const why = whyHtml ?? whyMdx
    index++
    if (verbatim) continue
    if (unchecked) {
      if (!why?.trim()) problems.push(`${file}, block ${index}: an unchecked block needs a reason`)
      else uncheckedBlocks.push(`${file}, block ${index}: ${why.trim()}`)
      continue
    }
    const shown = meta && /file="/.test(meta) ? meta : undefined
    if (shown) {
      const path = /file="([^"]+)"/.exec(shown)?.[1]
      const target = path && resolve(dirname(join(root, file)), path)
      if (!target || !existsSync(target))
        problems.push(`${file}, block ${index}: ${shown.trim()} names no file`)
      else if (!includedFiles().has(target))
        problems.push(
          `${file}, block ${index}: ${shown.trim()} shows ${relative(root, target)}, which no tsconfig of the repository includes, so nothing type-checks it`,
        )
      else shownCount++
      continue
    }
    const ext = extensions[tag]
    const name = `${file.replace(/[/.]/g, '_')}_${index}.${ext}`
    // Each block is a module of its own; say where it came from, for tsc's errors.
    writeFileSync(join(out, name), `// ${file}, block ${index}\n${code}\nexport {}\n`)
    count++
  }
}
if (problems.length > 0) {
  console.error(`examples/readme-code: ${problems.length} block(s) that nothing type-checks:`)
  for (const problem of problems) console.error(`  ${problem}`)
  process.exit(1)
}
console.log(
  `${count} blocks written to ${relative(root, out) || out}/; ${shownCount} shown files, each in a tsconfig`,
)
if (uncheckedBlocks.length > 0) {
  console.log(`${uncheckedBlocks.length} blocks not type-checked, each with its reason:`)
  for (const block of uncheckedBlocks) console.log(`  ${block}`)
}
