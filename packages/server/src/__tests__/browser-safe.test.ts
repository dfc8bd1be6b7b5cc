import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

// `@preview-chat/msw` mounts the backend in a service worker: the main entry's modules (everything
// in src/ except node/, cli.ts and tests) must import neither `node:` modules nor `ws`.
describe('the main entry [R-SERVER-BROWSER-SAFE]', () => {
  it('imports no Node-only module', () => {
    const src = join(import.meta.dirname, '..')
    const offenders = readdirSync(src)
      .filter((file) => file.endsWith('.ts') && file !== 'cli.ts')
      .filter((file) => /from ['"](node:|ws['"])/.test(readFileSync(join(src, file), 'utf8')))
    expect(offenders).toEqual([])
  })
})
