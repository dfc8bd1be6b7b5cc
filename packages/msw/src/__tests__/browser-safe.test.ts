import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const src = join(import.meta.dirname, '..')

describe('the main entry runs in a service worker [R-MSW-BROWSER-SAFE]', () => {
  it('imports only msw and workspace packages (never msw/node, vitest or node:)', () => {
    const files = readdirSync(src).filter((file) => file.endsWith('.ts') && file !== 'vitest.ts')
    expect(files).toContain('index.ts')
    for (const file of files) {
      const text = readFileSync(join(src, file), 'utf8')
      const imports = [...text.matchAll(/from '([^']+)'/g)].map((match) => match[1])
      for (const specifier of imports) {
        expect(
          specifier === 'msw' ||
            // The Storybook entry starts the browser's worker: browser-only, never Node's.
            (file === 'storybook.ts' && specifier === 'msw/browser') ||
            specifier?.startsWith('./') ||
            specifier?.startsWith('@preview-chat/'),
          `${file} imports ${specifier}`,
        ).toBe(true)
      }
      expect(imports).not.toContain('@preview-chat/server/node')
    }
  })
})
