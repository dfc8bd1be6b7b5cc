// Writes every ```ts and ```tsx block of the repository's READMEs and of the docs site's pages
// (site/docs/**/*.md, *.mdx) to generated/, one module each, for `tsc` to check against the
// workspace's packages. A block preceded by `<!-- example: name -->` is checked elsewhere,
// verbatim against the test that runs it (see packages/msw's readme test); a site block with
// `file="…"` shows a file that its own package type-checks (site/examples, the packages' tests).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const out = fileURLToPath(new URL('generated', import.meta.url))
const readmes = [
  'README.md',
  ...readdirSync(join(root, 'packages')).map((name) => `packages/${name}/README.md`),
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  ...readdirSync(join(root, 'site/docs'), { recursive: true })
    .map(String)
    .filter((name) => /\.mdx?$/.test(name) && !name.startsWith('api/'))
    .map((name) => `site/docs/${name}`),
]

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
let count = 0
for (const file of readmes) {
  let text
  try {
    text = readFileSync(join(root, file), 'utf8')
  } catch {
    continue
  }
  const blocks = text.matchAll(
    /(<!-- example: \w+ -->\n+)?^[ \t]*```(tsx?)( file=[^\n]*)?\n([\s\S]*?)\n[ \t]*```/gm,
  )
  let index = 0
  for (const [, verbatim, ext, shown, code] of blocks) {
    index++
    if (verbatim || shown) continue
    const name = `${file.replace(/[/.]/g, '_')}_${index}.${ext}`
    // Each block is a module of its own; say where it came from, for tsc's errors.
    writeFileSync(join(out, name), `// ${file}, block ${index}\n${code}\nexport {}\n`)
    count++
  }
}
console.log(`${count} README blocks written to ${relative(root, out)}/`)
