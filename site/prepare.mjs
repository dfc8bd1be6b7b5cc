// Before every dev and build of the site: msw's service worker into the site's public files (what
// `npx msw init` writes), a page for each decision record of docs/decisions/ (one line that
// includes the record from where it is), and the API reference from the packages' TSDoc.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Application } from 'typedoc'

const site = fileURLToPath(new URL('.', import.meta.url))
const repo = join(site, '..')
const require = createRequire(import.meta.url)

copyFileSync(
  join(dirname(require.resolve('msw/package.json')), 'lib/mockServiceWorker.js'),
  join(site, 'docs/public/mockServiceWorker.js'),
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
const entryPoints = readdirSync(join(repo, 'packages'))
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
        return join('packages', name, source)
      })
  })
const started = Date.now()
const app = await Application.bootstrapWithPlugins({
  entryPoints: entryPoints.map((path) => join(repo, path)),
  tsconfig: join(site, 'typedoc.tsconfig.json'),
  plugin: ['typedoc-plugin-markdown'],
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
const project = await app.convert()
if (!project) throw new Error('TypeDoc could not convert the packages')
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
console.log(`API reference written to docs/api/ in ${Date.now() - started} ms`)
