import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { findImportCycles } from '../../../../scripts/import-cycles.mjs'
import { checkAsLint as check, plantedTrees } from '../../../../scripts/import-cycles.testing.mjs'

// Issue 27, row m: `scripts/import-cycles.mjs` (part of `pnpm lint`) fails on an import circle.
// It runs on tiny trees planted for the purpose and on the server's own sources; once as `pnpm
// lint` runs it, in its own process, for its exit code.
const serverSrc = fileURLToPath(new URL('..', import.meta.url))
const trees = plantedTrees('import-cycles')
afterAll(trees.remove)
const { plant } = trees

describe('the import cycle check [R-SERVER-NO-CYCLES]', () => {
  it('fails on a planted circle, type-only imports and index files included, and names it', () => {
    const dir = plant('circle', {
      'context.ts':
        "import type { Running } from './execution'\nexport interface Context { running: Running }\n",
      'execution/index.ts': "export type { Running } from './start.js'\n",
      'execution/start.ts':
        "import { helper } from '../threads'\nexport interface Running { id: string }\nexport const start = helper\n",
      'threads.ts':
        "import type { Context } from './context'\nexport const helper = (c?: Context) => c\n",
      'leaf.ts': "import { start } from './execution/start'\nexport const leaf = start\n",
      // Tests may import anything: they are not part of the graph.
      '__tests__/context.test.ts': "import '../context'\nimport '../leaf'\n",
    })
    expect(findImportCycles(dir)).toEqual([
      {
        circle: [
          'context.ts',
          'execution/index.ts',
          'execution/start.ts',
          'threads.ts',
          'context.ts',
        ],
        files: ['context.ts', 'execution/index.ts', 'execution/start.ts', 'threads.ts'],
      },
    ])
    // As `pnpm lint` runs it: the exit code fails the lint, the message names the circle.
    const { code, output } = check(dir)
    expect(code).toBe(1)
    expect(output).toContain(
      'context.ts → execution/index.ts → execution/start.ts → threads.ts → context.ts',
    )
  }, 20_000)

  it('finds a file that imports itself, and none once the shared type moves to a leaf', () => {
    const self = plant('self', { 'a.ts': "import type { A } from './a'\nexport type A = 1\n" })
    expect(findImportCycles(self)).toEqual([{ circle: ['a.ts', 'a.ts'], files: ['a.ts'] }])
    const broken = plant('broken', {
      'types.ts': 'export interface Running { id: string }\n',
      'context.ts':
        "import type { Running } from './types'\nexport interface Context { running: Running }\n",
      'start.ts':
        "import type { Context } from './context'\nimport type { Running } from './types'\nexport const start = (c: Context): Running => c.running\n",
      'node.ts': "import { start } from './start'\nimport 'some-package'\nexport { start }\n",
    })
    expect(findImportCycles(broken)).toEqual([])
  })

  it("finds no circle in the server's own sources", () => {
    expect(findImportCycles(serverSrc)).toEqual([])
  })

  // The core had one (`effects/context` ↔ `effects/session`, a type import for `onIdle`).
  it.each(['core', 'react', 'assistant-ui', 'msw'])(
    'finds no circle in the sources of @preview-chat/%s (pnpm lint checks them too)',
    (name) => {
      expect(findImportCycles(join(serverSrc, '../../', name, 'src'))).toEqual([])
    },
  )
})
