// What a package's tarball (`pnpm pack`) must hold, and nothing else: package.json, README.md,
// LICENSE, CHANGELOG.md; the built dist (JavaScript, its source maps, the d.ts); the sources
// those maps point at (src/, tests left out), so a debugger shows our code; the server's bin; the
// server's SQL migrations (src/postgres/migrations/NNN_name.sql), which its Postgres store reads.
// scripts/consumer-smoke.mjs checks every tarball it packs with it.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, normalize } from 'node:path/posix'

const required = ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']
const test = /(^|\/)__tests__\/|\.test(-d)?\.tsx?$|\.spec\.tsx?$/

const allowed = (manifest, file) =>
  required.includes(file) ||
  /^dist\/.+\.(js|js\.map|d\.ts)$/.test(file) ||
  (/^src\/.+\.tsx?$/.test(file) && !test.test(file)) ||
  /^src\/postgres\/migrations\/\d{3}_[a-z0-9_]+\.sql$/.test(file) ||
  (manifest.bin !== undefined && Object.values(manifest.bin).some((bin) => normalize(bin) === file))

/** The exports targets and bins a package.json names: each must be in the tarball. */
const named = (manifest) => {
  const targets = []
  const walk = (value) => {
    if (typeof value === 'string') targets.push(value)
    else if (value && typeof value === 'object') Object.values(value).forEach(walk)
  }
  for (const [subpath, target] of Object.entries(manifest.exports ?? {}))
    if (subpath !== './package.json') walk(target)
  walk(manifest.bin)
  return [...new Set(targets.map((target) => normalize(target)))]
}

/**
 * What is wrong with a tarball of `manifest` holding `files` (paths below `package/`);
 * `read(file)` gives a file's text. An empty list: it holds what it should.
 */
export function tarballProblems(manifest, files, read) {
  const problems = []
  const present = new Set(files)
  for (const file of required) if (!present.has(file)) problems.push(`${file} is missing`)
  for (const target of named(manifest))
    if (!present.has(target)) problems.push(`${target} is missing (named by package.json)`)
  for (const file of files) {
    if (!allowed(manifest, file)) problems.push(`${file} should not be published`)
    if (!file.endsWith('.js.map')) continue
    if (!present.has(file.slice(0, -'.map'.length))) problems.push(`${file} maps no file`)
    const { sources = [] } = JSON.parse(read(file))
    for (const source of sources) {
      const path = normalize(join(dirname(file), source))
      if (!present.has(path)) problems.push(`${file} points at ${path}, not in the tarball`)
    }
  }
  return problems
}

/** Lists and checks a .tgz as `tarballProblems` does. */
export function checkTarball(tarball, manifest) {
  const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
  const files = listing
    .split('\n')
    .filter((line) => line && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''))
  const dir = mkdtempSync(join(tmpdir(), 'preview-chat-tarball-'))
  try {
    execFileSync('tar', ['-xzf', tarball, '-C', dir])
    return {
      files,
      problems: tarballProblems(manifest, files, (file) =>
        readFileSync(join(dir, 'package', file), 'utf8'),
      ),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
