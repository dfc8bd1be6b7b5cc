// `pnpm check:api`: the public API of every entry point, as API Extractor reports it, against the
// report committed in packages/<pkg>/api/<entry>.api.md. A change of the public API is then a diff
// a reviewer reads; `pnpm api:update` builds the packages and writes the reports anew.
//
// It reads the d.ts files `pnpm build` (tsup) wrote, so `pnpm check:packages` runs before it in
// `pnpm test`. One TypeScript program per package serves all of its entries. Left out: the
// `/internal` entry points and what they export (no promise is made for them), declarations
// tagged `@internal` (the report's "public" variant; an untagged one counts as public), and doc
// comments. Kept: a type the API names but no entry exports (a change to it is an API change).
//
//   node scripts/api-report.mjs [--update] [--root <dir>]
import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor'

/** The report's name for an `exports` subpath: `.` is `index`, `./devtools/production` is `devtools-production`. */
export const reportName = (subpath) =>
  subpath === '.' ? 'index' : subpath.replace(/^\.\//, '').replaceAll('/', '-')

/** A package's entry points with types: each `exports` subpath, `internal` for `/internal` ones. */
export function entryPoints(manifest) {
  return Object.entries(manifest.exports ?? {})
    .filter(([, target]) => typeof target === 'object' && target.types)
    .map(([subpath, target]) => ({
      subpath,
      name: reportName(subpath),
      types: target.types,
      internal: /(^|\/)internal$/.test(subpath),
    }))
}

/**
 * The report less what the `/internal` entries export (outside semver: the engine's state and
 * commands, which a public member such as `getEngineState()` names) and less what only those
 * reach: an unexported declaration stays if an exported one names it, directly or through others.
 */
export function withoutInternal(report, internalNames) {
  const blocks = report.split('\n\n')
  // The name an unexported declaration declares; exported ones and the header are the roots.
  const declared = blocks.map(
    (block) =>
      block.match(
        /^(?:\/\/.*\n)*(?:declare )?(?:type|interface|class|function|const|enum|namespace) ([\w$]+)/,
      )?.[1],
  )
  const names = (block) => new Set(block.match(/[\w$]+/g))
  const kept = blocks.map((_, i) => declared[i] === undefined)
  const next = blocks.filter((_, i) => kept[i])
  while (next.length > 0) {
    const mentioned = names(next.pop())
    blocks.forEach((block, i) => {
      if (kept[i] || internalNames.has(declared[i]) || !mentioned.has(declared[i])) return
      kept[i] = true
      next.push(block)
    })
  }
  return blocks.filter((_, i) => kept[i]).join('\n\n')
}

const silent = { logLevel: 'none', addToApiReportFile: false }

function configFor(packageDir, manifest, entry, tempFolder) {
  return ExtractorConfig.prepare({
    configObjectFullPath: join(packageDir, 'api-extractor.json'),
    packageJsonFullPath: join(packageDir, 'package.json'),
    packageJson: manifest,
    configObject: {
      projectFolder: packageDir,
      newlineKind: 'lf',
      mainEntryPointFilePath: join(packageDir, entry.types),
      compiler: {
        overrideTsconfig: {
          // The built d.ts as a user's bundler-resolved app reads them; no @types but those named.
          compilerOptions: {
            lib: ['ES2023', 'DOM'],
            module: 'ESNext',
            moduleResolution: 'Bundler',
            skipLibCheck: true,
            types: [],
          },
          files: entryPoints(manifest).map((e) => join(packageDir, e.types)),
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.name,
        reportVariants: ['public'],
        reportFolder: tempFolder,
        reportTempFolder: tempFolder,
        // A type the API names but the entry does not export is part of the API all the same.
        includeForgottenExports: true,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'error' } },
        // Our comments are prose, not TSDoc; the names of unexported types are in the report.
        extractorMessageReporting: {
          default: { logLevel: 'warning', addToApiReportFile: false },
          'ae-missing-release-tag': silent,
          'ae-forgotten-export': silent,
          'ae-internal-missing-underscore': silent,
          'ae-unresolved-link': silent,
          'ae-undocumented': silent,
        },
        tsdocMessageReporting: { default: silent },
      },
    },
  })
}

/**
 * The report without what documentation alone changes: the `(undocumented)` notes and the doc
 * comments API Extractor keeps inside types (a union's members). Writing docs is no API change.
 */
const withoutDocs = (report) =>
  report
    .replace(/^[ \t]*\/\/ \(undocumented\)\n/gm, '')
    .replace(/ \(undocumented\)$/gm, '')
    .replace(/^[ \t]*\/\*\*[\s\S]*?\*\/\n/gm, '')

/** Every public entry's report text, by report name, from the package's built d.ts files. */
export function generateReports(packageDir) {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'))
  const entries = entryPoints(manifest).filter((entry) => !entry.internal)
  for (const entry of entryPoints(manifest))
    if (!existsSync(join(packageDir, entry.types)))
      throw new Error(
        `${manifest.name}: ${entry.types} is missing. Build the packages first (\`pnpm build\`), or run \`pnpm api:update\`.`,
      )
  const temp = mkdtempSync(join(tmpdir(), 'preview-chat-api-'))
  const reports = new Map()
  try {
    const configs = entries.map((entry) => [entry, configFor(packageDir, manifest, entry, temp)])
    const compilerState = CompilerState.create(configs[0][1], {
      additionalEntryPoints: configs.map(([, config]) => config.mainEntryPointFilePath),
    })
    const checker = compilerState.program.getTypeChecker()
    const internalNames = new Set(
      entryPoints(manifest)
        .filter((entry) => entry.internal)
        .flatMap((entry) => {
          const file = compilerState.program.getSourceFile(join(packageDir, entry.types))
          return checker.getExportsOfModule(checker.getSymbolAtLocation(file)).map((s) => s.name)
        }),
    )
    for (const [entry, config] of configs) {
      const problems = []
      const result = Extractor.invoke(config, {
        localBuild: true,
        compilerState,
        messageCallback(message) {
          if (message.logLevel === 'error' || message.logLevel === 'warning')
            problems.push(message.formatMessageWithLocation(packageDir))
          message.handled = true
        },
      })
      if (!result.succeeded || problems.length > 0)
        throw new Error(`${manifest.name}${entry.subpath.slice(1)}:\n  ${problems.join('\n  ')}`)
      const file = readdirSync(temp).find((f) => f === `${entry.name}.public.api.md`)
      if (!file)
        throw new Error(`API Extractor wrote no report for ${manifest.name} ${entry.subpath}`)
      // Name the entry point, not only the package, in the report's title.
      const importPath = `${manifest.name}${entry.subpath.slice(1)}`
      reports.set(
        entry.name,
        withoutInternal(withoutDocs(readFileSync(join(temp, file), 'utf8')), internalNames).replace(
          /^## (Public )?API Report File for "[^"]*"/,
          `## $1API Report File for "${importPath}"`,
        ),
      )
    }
  } finally {
    rmSync(temp, { recursive: true, force: true })
  }
  return reports
}

/** The published packages of the workspace: packages/* that are not private. */
export function publishedPackages(root) {
  return readdirSync(join(root, 'packages'))
    .map((name) => join(root, 'packages', name))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .filter((dir) => !JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).private)
}

/** The report's diff, committed (-) against built (+), its hunks cut after `most` lines. */
const diff = (committed, generated, most = 80) => {
  let text = ''
  try {
    execFileSync('git', ['diff', '--no-index', '--no-color', '--', committed, generated])
  } catch (error) {
    text = error.stdout.toString()
  }
  const lines = text.split('\n')
  const hunks = lines.slice(lines.findIndex((line) => line.startsWith('@@')))
  const cut = hunks.length > most ? [`  … ${hunks.length - most} more lines`] : []
  return ['--- committed', '+++ built from dist/', ...hunks.slice(0, most), ...cut].join('\n')
}

/** Compares (or with `update`, writes) every report; returns the problems, one string each. */
export function checkReports(root, { update = false } = {}) {
  const problems = []
  const temp = mkdtempSync(join(tmpdir(), 'preview-chat-api-new-'))
  try {
    for (const packageDir of publishedPackages(root)) {
      const folder = join(packageDir, 'api')
      const reports = generateReports(packageDir)
      const committed = existsSync(folder)
        ? readdirSync(folder).filter((f) => f.endsWith('.api.md'))
        : []
      if (update) {
        mkdirSync(folder, { recursive: true })
        for (const file of committed)
          if (!reports.has(file.replace(/\.api\.md$/, ''))) rmSync(join(folder, file))
        for (const [name, text] of reports) writeFileSync(join(folder, `${name}.api.md`), text)
        continue
      }
      for (const file of committed)
        if (!reports.has(file.replace(/\.api\.md$/, '')))
          problems.push(`${relative(root, join(folder, file))}: no such entry point any more`)
      for (const [name, text] of reports) {
        const file = join(folder, `${name}.api.md`)
        if (!existsSync(file)) {
          problems.push(`${relative(root, file)}: missing (a new entry point)`)
          continue
        }
        if (readFileSync(file, 'utf8') === text) continue
        const fresh = join(
          temp,
          `${relative(root, packageDir).replaceAll('/', '-')}-${name}.api.md`,
        )
        writeFileSync(fresh, text)
        problems.push(`${relative(root, file)}: the public API changed\n${diff(file, fresh)}`)
      }
    }
  } finally {
    rmSync(temp, { recursive: true, force: true })
  }
  return problems
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const at = args.indexOf('--root')
  const root = at >= 0 ? args[at + 1] : fileURLToPath(new URL('..', import.meta.url))
  const update = args.includes('--update')
  const started = performance.now()
  try {
    const problems = checkReports(root, { update })
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    if (update) console.log(`api reports: written (${seconds} s)`)
    else if (problems.length === 0)
      console.log(`api reports: every public entry point matches its report (${seconds} s)`)
    else {
      console.error(problems.join('\n\n'))
      console.error(
        `\napi reports: ${problems.length} report(s) differ from the public API. If the change is meant, run \`pnpm api:update\` and commit packages/*/api/ with it (a changeset too: \`pnpm changeset\`); if not, undo the change of the exported types.`,
      )
      process.exitCode = 1
    }
  } catch (error) {
    console.error(`api reports: ${error.message}`)
    process.exitCode = 1
  }
}
