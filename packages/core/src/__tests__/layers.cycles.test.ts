/**
 * The import cycle check (`scripts/import-cycles.mjs`, the last step of `pnpm lint`) on the core:
 * shown failing on circles planted in a tree shaped like packages/core/src — a type-only one inside
 * effects/ (the core had it: `effects/context` ↔ `effects/session`), one that an `export … from`
 * closes across the layers, one through an entry point, one through a folder's index — and passing
 * the same tree without them, and the core's own sources. The layer rules (layers.lint.test.ts)
 * say which way an import may go; this check catches a circle wherever it closes, tests aside.
 */
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { defaultDirs, findImportCycles } from '../../../../scripts/import-cycles.mjs'
import { checkAsLint as check, plantedTrees } from '../../../../scripts/import-cycles.testing.mjs'

const coreSrc = fileURLToPath(new URL('..', import.meta.url))
const trees = plantedTrees('core-cycles')
afterAll(trees.remove)

/** A tree like packages/core/src, its layers importing downwards only. */
const core: Record<string, string> = {
  'wire/contract/errors.ts':
    'export class PreviewChatError extends Error {}\nexport const describeValue = (value: unknown) => String(value)\n',
  'wire/contract/index.ts': "export * from './errors.js'\n",
  'engine/model.ts':
    "import type { PreviewChatError } from '../wire/contract/errors'\nexport interface EngineState { error: PreviewChatError | null }\n",
  'engine/select.ts':
    "import type { EngineState } from './model'\nexport type SessionState = Pick<EngineState, 'error'>\n",
  'platform/environment.ts':
    "import { describeValue } from '../wire/contract/errors'\nexport interface Timers { now(): number }\nexport const describe = describeValue\n",
  'platform/throttle.ts':
    "import type { Timers } from './environment'\nexport type Throttle = (timers: Timers) => void\n",
  'effects/context.ts':
    "import type { Timers } from '../platform/environment'\nexport interface SessionContext { timers: Timers }\n",
  'effects/session.ts':
    "import type { SessionContext } from './context'\nimport type { SessionState } from '../engine/select'\nexport class PreviewChatSession {\n  constructor(readonly context: SessionContext, readonly state?: SessionState) {}\n}\n",
  'client.ts':
    "import { PreviewChatSession } from './effects/session'\nexport const createMinimalPreviewChatClient = () => PreviewChatSession\n",
  'contract.ts': "export * from './wire/contract/index'\n",
  'index.ts':
    "export { createMinimalPreviewChatClient } from './client'\nexport * from './contract'\n",
  // Tests import anything, the entry points included: they are not part of the graph.
  '__tests__/session.test.ts': "import '../index'\nimport '../effects/session'\n",
  'effects/session.test.ts': "import '../client'\n",
}

let planted = 0
/** The core-like tree with `changes` written over it, under a fresh directory. */
const plant = (changes: Record<string, string> = {}): string =>
  trees.plant(`tree-${planted++}`, { ...core, ...changes })

describe('the import cycle check on a core-like tree', () => {
  it('passes the tree as it is: every layer imports downwards', () => {
    const dir = plant()
    expect(findImportCycles(dir)).toEqual([])
    expect(check(dir)).toEqual({ code: 0, output: '' })
  }, 20_000)

  it.each<{ name: string; changes: Record<string, string>; circle: string[] }>([
    {
      name: 'a type-only circle inside effects/ (context ↔ session, as the core once had)',
      changes: {
        'effects/context.ts':
          "import type { Timers } from '../platform/environment'\nimport type { PreviewChatSession } from './session'\nexport interface SessionContext { timers: Timers; onIdle?(session: PreviewChatSession): void }\n",
      },
      circle: ['effects/context.ts', 'effects/session.ts', 'effects/context.ts'],
    },
    {
      name: 'a circle an `export … from` closes between effects/ and platform/',
      changes: {
        'effects/context.ts':
          "import type { Throttle } from '../platform/throttle'\nexport interface SessionContext { throttle: Throttle }\n",
        'platform/throttle.ts':
          "import type { Timers } from './environment'\nexport type Throttle = (timers: Timers) => void\nexport type { SessionContext } from '../effects/context'\n",
      },
      circle: ['effects/context.ts', 'platform/throttle.ts', 'effects/context.ts'],
    },
    {
      name: 'a circle through an entry point, by a `.js` specifier',
      changes: {
        'effects/session.ts':
          "import type { SessionContext } from './context'\nimport type { createMinimalPreviewChatClient } from '../client.js'\nexport class PreviewChatSession {\n  constructor(readonly context: SessionContext, readonly make?: typeof createMinimalPreviewChatClient) {}\n}\n",
      },
      circle: ['client.ts', 'effects/session.ts', 'client.ts'],
    },
    {
      name: 'a circle through the index, imported as `..`',
      changes: {
        'effects/session.ts':
          "import type { SessionContext } from './context'\nimport type { createMinimalPreviewChatClient } from '..'\nexport class PreviewChatSession {\n  constructor(readonly context: SessionContext, readonly make?: typeof createMinimalPreviewChatClient) {}\n}\n",
      },
      circle: ['client.ts', 'effects/session.ts', 'index.ts', 'client.ts'],
    },
    {
      name: 'a circle through a folder’s index (`from "."`) and an `export * from`',
      changes: {
        'wire/contract/errors.ts':
          "import type * as contract from '.'\nexport class PreviewChatError extends Error {}\nexport const describeValue = (value: unknown) => String(value)\nexport type Contract = typeof contract\n",
      },
      circle: ['wire/contract/errors.ts', 'wire/contract/index.ts', 'wire/contract/errors.ts'],
    },
  ])(
    'fails on $name, and names the circle',
    ({ changes, circle }) => {
      const dir = plant(changes)
      expect(findImportCycles(dir)).toEqual([{ circle, files: circle.slice(0, -1).sort() }])
      const { code, output } = check(dir)
      expect(code).toBe(1)
      expect(output).toContain(circle.join(' → '))
    },
    20_000,
  )

  it('covers the core when `pnpm lint` runs it, and finds no circle in its sources', () => {
    expect(defaultDirs).toContain('packages/core/src')
    expect(findImportCycles(coreSrc)).toEqual([])
  })
})
