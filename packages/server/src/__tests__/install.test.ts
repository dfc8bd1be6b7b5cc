/**
 * Issue 28, row 15: a fresh `pnpm install` of this repository prints no warning of ours. Its two
 * causes, checked as the files are (a fresh clone has no `dist/`): a workspace package's `bin`
 * that points at a build output cannot be linked before a build ("Failed to create bin … ENOENT");
 * a dependency's install script that pnpm neither runs nor is told to skip is reported ("Ignored
 * build scripts").
 */
import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../../../..')
const tracked = new Set(
  execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean),
)
const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')
const listed = (section: string) =>
  [...(workspace.split(`${section}:\n`)[1] ?? '').matchAll(/^ {2}- (\S+)$/gm)].map((m) => m[1])

/** The packages in a `node_modules` folder, scoped ones (`@scope/name`) included. */
const packageNames = (modules: string) =>
  readdirSync(modules).flatMap((name) =>
    name.startsWith('@')
      ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`)
      : name.startsWith('.')
        ? []
        : [name],
  )

describe('a fresh install prints no warning of ours [R-INSTALL-QUIET]', () => {
  it('every bin of a workspace package is a file in git, not a build output', () => {
    const packages = [...tracked].filter((path) =>
      /^(packages|examples)\/[^/]+\/package\.json$/.test(path),
    )
    const bins = packages.flatMap((path) => {
      const { bin } = JSON.parse(readFileSync(join(root, path), 'utf8')) as {
        bin?: string | Record<string, string>
      }
      const targets = typeof bin === 'string' ? [bin] : Object.values(bin ?? {})
      return targets.map((target) => join(path, '..', target).replaceAll('\\', '/'))
    })
    expect(bins.length).toBeGreaterThan(0)
    for (const bin of bins) {
      expect(bin, `${bin} is not in git`).toSatisfy((path: string) => tracked.has(path))
      expect(bin).not.toMatch(/\/dist\//)
    }
  })

  it('each dependency with an install script is either allowed to run it or told to skip it', () => {
    const decided = new Set([
      ...listed('onlyBuiltDependencies'),
      ...listed('ignoredBuiltDependencies'),
    ])
    const store = join(root, 'node_modules/.pnpm')
    const scripted = new Set<string>()
    for (const entry of readdirSync(store)) {
      const modules = join(store, entry, 'node_modules')
      if (!existsSync(modules)) continue
      for (const name of packageNames(modules)) {
        const manifest = join(modules, name, 'package.json')
        if (!existsSync(manifest) || lstatSync(join(modules, name)).isSymbolicLink()) continue
        const { scripts = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as {
          scripts?: Record<string, string>
        }
        if (scripts.preinstall || scripts.install || scripts.postinstall) scripted.add(name)
      }
    }
    expect(scripted.size).toBeGreaterThan(0)
    for (const name of scripted) expect(decided, `${name} has an install script`).toContain(name)
  })
})
