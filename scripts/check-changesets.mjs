// `pnpm check:changesets`: fails when a published package's source changed since its last release
// and no pending changeset (.changeset/*.md) names that package.
//
// The last release of a package is its tag `<name>@<version>` (as `changeset tag` makes it) when
// the clone has it, else the last commit that changed the `"version"` line of its package.json
// (the commit `changeset version` made): committed history, so a fresh clone without tags finds it
// too. A shallow clone may not reach that commit; then the check says so and how to deepen.
//
// Source: src/ (tests left out), bin/, tsup.config.ts, and the fields of package.json that ship
// (dependencies, exports…). A change users do not see takes an empty changeset that names the
// package: `pnpm changeset --empty`, with `No release: @preview-chat/<name>` and why in its text.
//
//   node scripts/check-changesets.mjs [--root <dir>]
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const test = /(^|\/)__tests__\/|\.test(-d)?\.tsx?$|\.spec\.tsx?$/
/** A path inside a package (relative to it) that is part of what users get. */
const isSource = (path) =>
  ((path.startsWith('src/') && !test.test(path)) ||
    path.startsWith('bin/') ||
    path === 'tsup.config.ts') &&
  !path.endsWith('.md')
const shippedFields = [
  'type',
  'exports',
  'bin',
  'files',
  'sideEffects',
  'engines',
  'dependencies',
  'peerDependencies',
  'peerDependenciesMeta',
]

/** The published packages: packages/* that are not private, with their manifest. */
function publishedPackages(root) {
  return readdirSync(join(root, 'packages'))
    .map((dir) => ({ dir: `packages/${dir}`, file: join(root, 'packages', dir, 'package.json') }))
    .filter(({ file }) => existsSync(file))
    .map(({ dir, file }) => ({ dir, manifest: JSON.parse(readFileSync(file, 'utf8')) }))
    .filter(({ manifest }) => !manifest.private)
}

/** The pending changesets: which packages each names, or, for an empty one, mentions. */
export function pendingChangesets(root) {
  const folder = join(root, '.changeset')
  if (!existsSync(folder)) return []
  return readdirSync(folder)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .map((file) => {
      const text = readFileSync(join(folder, file), 'utf8')
      const match = text.match(/^---\r?\n([\s\S]*?)^---\r?\n?([\s\S]*)$/m)
      if (!match) throw new Error(`.changeset/${file} has no front matter (--- … ---)`)
      const [, front, body] = match
      const releases = [...front.matchAll(/^\s*["']?([^"':\s]+)["']?\s*:\s*(\w+)\s*$/gm)].map(
        ([, name, bump]) => ({ name, bump }),
      )
      const noRelease =
        releases.length === 0
          ? [...body.matchAll(/no release:([^\n]*)/gi)].flatMap(([, names]) =>
              [...names.matchAll(/@[\w.-]+\/[\w.-]+/g)].map(([name]) => name),
            )
          : []
      return { file, releases, noRelease }
    })
}

export function checkChangesets(root) {
  const git = (...args) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const gitOrNull = (...args) => {
    try {
      return git(...args).trim()
    } catch {
      return null
    }
  }
  const shallow = git('rev-parse', '--is-shallow-repository').trim() === 'true'
  const boundary = shallow
    ? new Set(
        readFileSync(resolve(root, git('rev-parse', '--git-path', 'shallow').trim()), 'utf8')
          .split('\n')
          .filter(Boolean),
      )
    : new Set()
  const pending = pendingChangesets(root)
  const failures = []
  const lines = []

  for (const { dir, manifest } of publishedPackages(root)) {
    const { name, version } = manifest
    const tag = `${name}@${version}`
    let release = gitOrNull('rev-parse', '-q', '--verify', `refs/tags/${tag}^{commit}`)
    let how = `tag ${tag}`
    if (!release) {
      release = gitOrNull(
        'log',
        '-1',
        '--format=%H',
        '-G',
        '"version":',
        '--',
        `${dir}/package.json`,
      )
      how = `the commit that made it ${version}`
    }
    if (!release || boundary.has(release))
      throw new Error(
        shallow
          ? `this is a shallow clone: the last release of ${name} (${version}) is not in its history, so what changed since cannot be told. Fetch the history (\`git fetch --unshallow\`, or \`fetch-depth: 0\` in CI) or the tag ${tag} (\`git fetch origin tag ${tag}\`), then run \`pnpm check:changesets\` again.`
          : `no commit sets the version of ${dir}/package.json: commit it first.`,
      )

    const changed = new Set(
      [
        ...git('diff', '--name-only', release, '--', dir).split('\n'),
        ...git('ls-files', '--others', '--exclude-standard', '--', dir).split('\n'),
      ]
        .filter(Boolean)
        .map((path) => path.slice(dir.length + 1))
        .filter(isSource),
    )
    const before = gitOrNull('show', `${release}:${dir}/package.json`)
    if (before) {
      const old = JSON.parse(before)
      for (const field of shippedFields)
        if (JSON.stringify(old[field]) !== JSON.stringify(manifest[field]))
          changed.add(`package.json (${field})`)
    }
    const named = pending.filter(
      (changeset) =>
        changeset.releases.some((r) => r.name === name) || changeset.noRelease.includes(name),
    )
    const at = `${version}, ${how}: ${release.slice(0, 7)}`
    if (changed.size === 0) lines.push(`${name}: unchanged since ${at}`)
    else if (named.length > 0)
      lines.push(
        `${name}: ${changed.size} source file(s) changed since ${at}; named by ${named.map((c) => `.changeset/${c.file}`).join(', ')}`,
      )
    else failures.push({ name, at, changed: [...changed].sort() })
  }
  return { lines, failures }
}

export function failureMessage(failures) {
  const list = failures
    .map(
      ({ name, at, changed }) =>
        `${name} changed since its last release (${at}) and no pending changeset names it:\n${changed
          .slice(0, 10)
          .map((path) => `    ${path}`)
          .join('\n')}${changed.length > 10 ? `\n    … and ${changed.length - 10} more` : ''}`,
    )
    .join('\n')
  return `${list}

Run \`pnpm changeset\`, choose ${failures.map((f) => f.name).join(', ')} and the bump (patch: a fix; minor: a feature, or a breaking change while we are at 0.x), write what changed for the changelog, and commit the .changeset/*.md file it makes with your change.
A change users do not see (tests, comments, a refactor): \`pnpm changeset --empty\`, and write in that file \`No release: ${failures.map((f) => f.name).join(', ')}\` and why.`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const at = args.indexOf('--root')
  const root = at >= 0 ? args[at + 1] : fileURLToPath(new URL('..', import.meta.url))
  try {
    const { lines, failures } = checkChangesets(root)
    for (const line of lines) console.log(`changesets: ${line}`)
    if (failures.length > 0) {
      console.error(failureMessage(failures))
      process.exitCode = 1
    }
  } catch (error) {
    console.error(`changesets: ${error.message}`)
    process.exitCode = 1
  }
}
