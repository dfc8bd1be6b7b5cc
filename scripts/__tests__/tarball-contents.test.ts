import { describe, expect, it } from 'vitest'
import { tarballProblems } from '../tarball-contents.mjs'

const manifest = {
  name: '@preview-chat/demo',
  exports: {
    '.': { types: './dist/index.d.ts', default: './dist/index.js' },
    './package.json': './package.json',
  },
  bin: { demo: './bin/demo.js' },
}
const good = [
  'package.json',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
  'bin/demo.js',
  'dist/index.js',
  'dist/index.js.map',
  'dist/index.d.ts',
  'dist/chunk-AB12.d.ts',
  'src/index.ts',
  'src/view.tsx',
  'src/postgres/migrations/001_initial.sql',
]
const maps: Record<string, string> = {
  'dist/index.js.map': JSON.stringify({ sources: ['../src/index.ts', '../src/view.tsx'] }),
}
const read = (file: string) => maps[file] ?? '{}'

describe('tarball contents', () => {
  it('passes a tarball of dist, its sources, the bin and the four files', () => {
    expect(tarballProblems(manifest, good, read)).toEqual([])
  })

  it('fails on tests, configs and the API reports', () => {
    const planted = [
      ...good,
      'src/__tests__/helpers.ts',
      'src/index.test.ts',
      'src/types.test-d.ts',
      'tsconfig.json',
      'tsup.config.ts',
      'api/index.api.md',
      'src/seed.sql',
    ]
    expect(tarballProblems(manifest, planted, read)).toEqual([
      'src/__tests__/helpers.ts should not be published',
      'src/index.test.ts should not be published',
      'src/types.test-d.ts should not be published',
      'tsconfig.json should not be published',
      'tsup.config.ts should not be published',
      'api/index.api.md should not be published',
      'src/seed.sql should not be published',
    ])
  })

  it('fails when a required file or an exports target is missing', () => {
    const without = good.filter((f) => f !== 'CHANGELOG.md' && f !== 'dist/index.d.ts')
    expect(tarballProblems(manifest, without, read)).toEqual([
      'CHANGELOG.md is missing',
      'dist/index.d.ts is missing (named by package.json)',
    ])
  })

  it('fails when a source map points at a file the tarball lacks, or maps nothing', () => {
    const without = [...good.filter((f) => f !== 'src/view.tsx'), 'dist/gone.js.map']
    expect(tarballProblems(manifest, without, read)).toEqual([
      'dist/index.js.map points at src/view.tsx, not in the tarball',
      'dist/gone.js.map maps no file',
    ])
  })
})
