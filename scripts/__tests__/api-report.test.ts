// scripts/api-report.mjs run as `pnpm check:api` and `pnpm api:update` run it, over a package of its
// own whose built d.ts is written here: a planted change of a public type must fail the check.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const script = fileURLToPath(new URL('../api-report.mjs', import.meta.url))
let root: string

const write = (path: string, text: string) => {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), text)
}
const run = (...args: string[]) => {
  const result = spawnSync('node', [script, '--root', root, ...args], { encoding: 'utf8' })
  return { code: result.status, out: result.stdout, err: result.stderr }
}
const index = `import { EngineState } from './state';
export interface ClientOptions {
    baseUrl: string;
}
export declare function createClient(options: ClientOptions): Session;
export interface Session {
    getEngineState(): EngineState;
}
/** @internal */
export declare function engineState(): unknown;
`
// What only the /internal entry exports, and what only it reaches.
const state = `interface ReadState {
    pending: boolean;
    retry: RetryState;
}
interface RetryState {
    read: ReadState;
}
export interface EngineState {
    read: ReadState;
}
`

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'preview-chat-api-'))
  write(
    'packages/demo/package.json',
    JSON.stringify({
      name: '@preview-chat/demo',
      version: '0.2.0',
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './internal': { types: './dist/internal.d.ts', default: './dist/internal.js' },
        './package.json': './package.json',
      },
    }),
  )
  write('packages/demo/dist/index.d.ts', index)
  write('packages/demo/dist/state.d.ts', state)
  write(
    'packages/demo/dist/internal.d.ts',
    "export { EngineState } from './state';\nexport declare const secret: number;\n",
  )
  write('packages/private/package.json', '{ "name": "private", "private": true }')
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('pnpm check:api', () => {
  it('writes one report per public entry point, @internal and /internal left out', () => {
    expect(run('--update')).toMatchObject({ code: 0 })
    const report = readFileSync(join(root, 'packages/demo/api/index.api.md'), 'utf8')
    expect(report).toContain('## Public API Report File for "@preview-chat/demo"')
    expect(report).toContain('export function createClient(options: ClientOptions): Session;')
    expect(report).toContain('baseUrl: string;')
    expect(report).not.toContain('engineState')
    expect(report).toContain('getEngineState(): EngineState;')
    expect(report).not.toContain('interface EngineState')
    expect(report).not.toContain('ReadState')
    expect(report).not.toContain('RetryState')
    expect(existsSync(join(root, 'packages/demo/api/internal.api.md'))).toBe(false)
    expect(existsSync(join(root, 'packages/private/api'))).toBe(false)
    expect(run()).toMatchObject({
      code: 0,
      out: expect.stringContaining('every public entry point matches its report'),
    })
  })

  it('fails on a planted change of a public type, with the diff and what to run', () => {
    write('packages/demo/dist/index.d.ts', index.replace('baseUrl: string;', 'baseUrl?: string;'))
    const { code, err } = run()
    expect(code).toBe(1)
    expect(err).toContain('packages/demo/api/index.api.md: the public API changed')
    expect(err).toContain('-    baseUrl: string;\n+    baseUrl?: string;')
    expect(err).toContain('run `pnpm api:update` and commit packages/*/api/')
  })

  it('does not fail on a change of an @internal declaration, nor on docs written', () => {
    const documented = index
      .replace('engineState(): unknown', 'engineState(): 1')
      .replace('    baseUrl', '    /** Where the API is. */\n    baseUrl')
    write('packages/demo/dist/index.d.ts', documented)
    expect(run()).toMatchObject({ code: 0 })
  })

  it('does not fail on a change of what only /internal exports', () => {
    write('packages/demo/dist/state.d.ts', state.replace('pending: boolean;', 'pending: 0 | 1;'))
    expect(run()).toMatchObject({ code: 0 })
    write('packages/demo/dist/state.d.ts', state)
  })

  it('fails on a report whose entry point is gone, and on a build that is missing', () => {
    write('packages/demo/dist/index.d.ts', index)
    write('packages/demo/api/old.api.md', '## old\n')
    expect(run()).toMatchObject({
      code: 1,
      err: expect.stringContaining('packages/demo/api/old.api.md: no such entry point any more'),
    })
    rmSync(join(root, 'packages/demo/api/old.api.md'))
    rmSync(join(root, 'packages/demo/dist/index.d.ts'))
    expect(run()).toMatchObject({
      code: 1,
      err: expect.stringContaining('dist/index.d.ts is missing. Build the packages first'),
    })
  })
})
