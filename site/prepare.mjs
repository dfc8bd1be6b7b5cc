// Before every dev and build of the site: msw's service worker into the site's public files (what
// `npx msw init` writes), a page for each decision record of docs/decisions/ (one line that
// includes the record from where it is), and the API reference from the packages' TSDoc.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Application, Converter, ReflectionKind, UnknownType } from 'typedoc'
import ts from 'typescript'

const site = fileURLToPath(new URL('.', import.meta.url))
const repo = join(site, '..')
const require = createRequire(import.meta.url)

copyFileSync(
  join(dirname(require.resolve('msw/package.json')), 'lib/mockServiceWorker.js'),
  join(site, 'docs/public/mockServiceWorker.js'),
)

// The reference server's command line, from the one table its `--help` prints
// (packages/server/src/cli-flags.ts): the server page includes the table and the help text, so
// neither can differ from what the CLI accepts (packages/server/src/__tests__/cli-flags.test.ts).
const fromCli = (code) =>
  execFileSync(
    process.execPath,
    ['--import', 'tsx', '--conditions=@preview-chat/source', '--input-type=module', '-e', code],
    { cwd: repo, encoding: 'utf8' },
  )
const cliFlags = "import * as cli from './packages/server/src/cli-flags.ts'; process.stdout.write"
mkdirSync(join(site, 'generated'), { recursive: true })
writeFileSync(
  join(site, 'generated/server-flags.md'),
  fromCli(`${cliFlags}(cli.renderFlagsMarkdown())`),
)
writeFileSync(
  join(site, 'generated/server-help.md'),
  `\`\`\`text\n${fromCli(`${cliFlags}(cli.renderHelp())`).trimEnd()}\n\`\`\`\n`,
)

const decisions = join(site, 'docs/decisions')
rmSync(decisions, { recursive: true, force: true })
mkdirSync(decisions, { recursive: true })
const records = readdirSync(join(repo, 'docs/decisions'))
  .filter((name) => name.endsWith('.md'))
  .sort()
for (const name of records) {
  const page = name.replace(/\.md$/, '')
  writeFileSync(
    join(decisions, `${page}.mdx`),
    `import Record from '../../../docs/decisions/${name}'\n\n<Record />\n`,
  )
}
writeFileSync(
  join(decisions, 'index.md'),
  `# Decisions\n\nThe hard cases, each with its record (from \`docs/decisions/\`):\n\n${records
    .map(
      (name) =>
        `- [${name.replace(/\.md$/, '').replace(/-/g, ' ')}](./${name.replace(/\.md$/, '')})`,
    )
    .join('\n')}\n`,
)

// The public entry points: every `exports` entry of every package under packages/ (its source, by
// the `@preview-chat/source` condition), but `/internal` (left out, as `@internal` is:
// excludeInternal) and what is no module (`./package.json`). The docs e2e checks that each has
// its page.
const entries = readdirSync(join(repo, 'packages'))
  .sort()
  .flatMap((name) => {
    let manifest
    try {
      manifest = JSON.parse(readFileSync(join(repo, 'packages', name, 'package.json'), 'utf8'))
    } catch {
      return []
    }
    return Object.entries(manifest.exports ?? {})
      .filter(([path, target]) => !/(^|\/)internal$/.test(path) && typeof target === 'object')
      .map(([path, target]) => {
        const source = target['@preview-chat/source']
        if (!source) throw new Error(`${manifest.name} exports ${path} with no source condition`)
        const sub = path.replace(/^\.\/?/, '')
        return {
          path: join(repo, 'packages', name, source),
          // What users import: `@preview-chat/react/queue`. Each module is named so.
          importName: sub ? `${manifest.name}/${sub}` : manifest.name,
        }
      })
  })
const started = Date.now()
const app = await Application.bootstrapWithPlugins({
  entryPoints: entries.map(({ path }) => path),
  // The library, not the monorepo; no source paths ("Defined in: packages/…").
  name: 'preview-chat',
  disableSources: true,
  tsconfig: join(site, 'typedoc.tsconfig.json'),
  plugin: ['typedoc-plugin-markdown'],
  // A page per entry point, each public name a heading on it, with the anchor the plugin's own
  // links name (for a few names its links count a repeat that Rspress's slugs do not:
  // `#previewchaterrorcode-1` where the heading's slug was `#previewchaterrorcode`).
  // A page per symbol was 399 of the site's 432 pages (docs/decisions/docs-site.md).
  router: 'module',
  useCustomAnchors: true,
  out: join(site, 'docs/api'),
  readme: 'none',
  excludeInternal: true,
  excludePrivate: true,
  skipErrorChecking: true,
  entryFileName: 'index',
  hidePageHeader: true,
  hideBreadcrumbs: true,
  useCodeBlocks: true,
  sanitizeComments: true,
  logLevel: 'Warn',
})
// A type alias written as a lookup (`Route['name']`, `keyof X`, `typeof x`) is shown as what it
// is, the union the checker resolves it to: a reader has no `Route` to look into.
const lookups = new Map()
app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
  if (!reflection.kindOf(ReflectionKind.TypeAlias)) return
  const symbol = context.getSymbolFromReflection(reflection)
  const written = symbol?.declarations?.[0]?.type?.kind
  const lookup = [
    ts.SyntaxKind.IndexedAccessType,
    ts.SyntaxKind.TypeOperator,
    ts.SyntaxKind.TypeQuery,
  ].includes(written)
  if (!symbol || !lookup) return
  const type = context.checker.getDeclaredTypeOfSymbol(symbol)
  lookups.set(
    reflection,
    context.checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation),
  )
})
const project = await app.convert()
if (!project) throw new Error('TypeDoc could not convert the packages')
for (const [reflection, expanded] of lookups) reflection.type = new UnknownType(expanded)
// TypeDoc names a module by its file's path (`react/src/queue`): named here by its import path,
// which its page's path follows.
// (TypeDoc's name: the path from the entry points' common folder, packages/, without `index.ts`.)
const typedocName = (path) =>
  relative(join(repo, 'packages'), path)
    .replace(/\\/g, '/')
    .replace(/(\/index)?\.tsx?$/, '')
for (const module of project.children ?? []) {
  const entry = entries.find(({ path }) => typedocName(path) === module.name)
  if (!entry) throw new Error(`API reference: no entry point for the module ${module.name}`)
  module.name = entry.importName
}
rmSync(join(site, 'docs/api'), { recursive: true, force: true })
await app.generateOutputs(project)
// A TSDoc comment that links a decision record: TypeDoc copies the file into _media/, which is no
// page; the record's page is.
rmSync(join(site, 'docs/api/_media'), { recursive: true, force: true })
for (const entry of readdirSync(join(site, 'docs/api'), { recursive: true })) {
  if (!String(entry).endsWith('.md')) continue
  const file = join(site, 'docs/api', String(entry))
  const text = readFileSync(file, 'utf8')
  const linked = text.replace(/\]\((?:\.\.\/)+_media\/([\w-]+)\.md\)/g, (link, name) => {
    if (!records.includes(`${name}.md`))
      throw new Error(`${entry}: ${link} names no decision record`)
    return `](/decisions/${name})`
  })
  if (linked !== text) writeFileSync(file, linked)
}
// The index: the entry points, by what users import.
{
  const index = join(site, 'docs/api/index.md')
  writeFileSync(
    index,
    readFileSync(index, 'utf8').replace(
      /^## Modules$/m,
      '## Entry points\n\nOne page per import path, as your code imports it; each name it exports is a heading there.',
    ),
  )
}
console.log(`API reference written to docs/api/ in ${Date.now() - started} ms`)
