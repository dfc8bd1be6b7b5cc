// scripts/check-changesets.mjs run as `pnpm check:changesets` runs it, in a git repository of its
// own with one published package: source changes planted with and without a changeset.
import { spawnSync, execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const script = fileURLToPath(new URL('../check-changesets.mjs', import.meta.url))
let repo: string

const write = (path: string, text: string) => {
  mkdirSync(dirname(join(repo, path)), { recursive: true })
  writeFileSync(join(repo, path), text)
}
const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
const commit = (message: string) => {
  git('add', '-A')
  git('commit', '-q', '-m', message)
}
const manifest = (version: string) =>
  `${JSON.stringify({ name: '@preview-chat/demo', version, dependencies: { zustand: '^5.1.0' } }, null, 2)}\n`
/** A source change committed with the changeset that names its package. */
const fixWithChangeset = () => {
  write('packages/demo/src/index.ts', 'export const a = 2\n')
  write('.changeset/brave-fox.md', "---\n'@preview-chat/demo': patch\n---\n\nA fix.\n")
  commit('A change and its changeset')
}
const check = (cwd = repo) => {
  const run = spawnSync('node', [script, '--root', cwd], { encoding: 'utf8' })
  return { code: run.status, out: run.stdout, err: run.stderr }
}

beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'preview-chat-changesets-'))
  git('init', '-q', '-b', 'main')
  git('config', 'user.email', 'test@example.com')
  git('config', 'user.name', 'test')
  git('config', 'commit.gpgsign', 'false')
  write('packages/demo/package.json', manifest('0.1.0'))
  write('packages/demo/src/index.ts', 'export const a = 1\n')
  write('packages/demo/src/__tests__/index.test.ts', "it('a', () => {})\n")
  write('packages/private/package.json', '{ "name": "private", "private": true }\n')
  write('.changeset/README.md', '# Changesets\n')
  commit('Release 0.1.0')
})
afterEach(() => rmSync(repo, { recursive: true, force: true }))

describe('pnpm check:changesets', () => {
  it('passes a package unchanged since its release, and one whose tests alone changed', () => {
    expect(check()).toMatchObject({ code: 0 })
    write('packages/demo/src/__tests__/index.test.ts', "it('b', () => {})\n")
    write('packages/demo/README.md', 'Docs.\n')
    commit('Tests and docs')
    const { code, out } = check()
    expect(code).toBe(0)
    expect(out).toContain('@preview-chat/demo: unchanged since 0.1.0')
  })

  it('fails on a source change with no changeset, saying to run pnpm changeset', () => {
    write('packages/demo/src/index.ts', 'export const a = 2\n')
    commit('A change')
    const { code, err } = check()
    expect(code).toBe(1)
    expect(err).toContain(
      '@preview-chat/demo changed since its last release (0.1.0, the commit that made it 0.1.0',
    )
    expect(err).toContain('    src/index.ts')
    expect(err).toContain('Run `pnpm changeset`, choose @preview-chat/demo')
    expect(err).toContain('`pnpm changeset --empty`')
  })

  it('counts uncommitted, new and dependency changes too', () => {
    write('packages/demo/src/new.ts', 'export const b = 1\n')
    expect(check().err).toContain('    src/new.ts')
    rmSync(join(repo, 'packages/demo/src/new.ts'))
    write('packages/demo/package.json', manifest('0.1.0').replace('^5.1.0', '^5.2.0'))
    expect(check()).toMatchObject({
      code: 1,
      err: expect.stringContaining('package.json (dependencies)'),
    })
  })

  it('passes once a pending changeset names the package', () => {
    fixWithChangeset()
    const { code, out } = check()
    expect(code).toBe(0)
    expect(out).toContain('1 source file(s) changed since 0.1.0')
    expect(out).toContain('named by .changeset/brave-fox.md')
  })

  it('takes an empty changeset as "no release" only for the packages it names', () => {
    write('packages/demo/src/index.ts', 'export const a = 1 // why\n')
    write('.changeset/quiet-owl.md', '---\n---\n\nA comment.\n')
    expect(check()).toMatchObject({ code: 1 })
    write('.changeset/quiet-owl.md', '---\n---\n\nNo release: @preview-chat/demo (a comment).\n')
    expect(check()).toMatchObject({ code: 0 })
  })

  it('counts from the new release once the changesets are consumed', () => {
    fixWithChangeset()
    rmSync(join(repo, '.changeset/brave-fox.md'))
    write('packages/demo/package.json', manifest('0.1.1'))
    commit('Release 0.1.1')
    expect(check()).toMatchObject({
      code: 0,
      out: expect.stringContaining('unchanged since 0.1.1'),
    })
    write('packages/demo/src/index.ts', 'export const a = 3\n')
    commit('Another change')
    expect(check()).toMatchObject({ code: 1, err: expect.stringContaining('(0.1.1,') })
  })

  it("counts from the release's tag when the clone has it", () => {
    write('packages/demo/src/index.ts', 'export const a = 2\n')
    commit('Published from here')
    git('tag', '@preview-chat/demo@0.1.0')
    const { code, out } = check()
    expect(code).toBe(0)
    expect(out).toContain('unchanged since 0.1.0, tag @preview-chat/demo@0.1.0')
  })

  it('says how to deepen a shallow clone that does not reach the release', () => {
    fixWithChangeset()
    const clone = `${repo}-shallow`
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${repo}`, clone])
    try {
      const { code, err } = check(clone)
      expect(code).toBe(1)
      expect(err).toContain(
        'this is a shallow clone: the last release of @preview-chat/demo (0.1.0)',
      )
      expect(err).toContain('`git fetch --unshallow`, or `fetch-depth: 0` in CI')
    } finally {
      rmSync(clone, { recursive: true, force: true })
    }
  })
})
