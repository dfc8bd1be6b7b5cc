// The core README's Next.js section shows examples/next-app's code as it is: the app that
// `pnpm typecheck` checks, `next build` builds under create-next-app's defaults, and
// e2e/next-app.spec.ts runs.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const repo = join(import.meta.dirname, '../../../..')
const read = (path: string) => readFileSync(join(repo, path), 'utf8')
const readme = read('packages/core/README.md')
const app = 'examples/next-app/'

const block = (name: string) =>
  new RegExp(`<!-- example: ${name} -->\\n+\`\`\`tsx?\\n([\\s\\S]*?)\\n\`\`\``).exec(readme)?.[1]

describe("the core README's Next.js section", () => {
  it('is about the app create-next-app makes today: cacheComponents on', () => {
    expect(read(`${app}next.config.ts`)).toMatch(/^ {2}cacheComponents: true,$/m)
    expect(readme).toContain('(16.4: `cacheComponents: true`')
    const next = (JSON.parse(read(`${app}package.json`)) as { dependencies: { next: string } })
      .dependencies.next
    expect(next).toMatch(/^16\.4\./)
  })

  it('shows the thread page awaiting params inside <Suspense>, as the app does', () => {
    const page = block('nextThreadPage')
    expect(page).toContain('<Suspense fallback=')
    expect(read(`${app}app/t/[threadId]/page.tsx`)).toContain(page)
  })

  it('shows the redirect that mints an id: connection() first, the whole route', () => {
    const route = block('nextRoute')
    expect(route).toContain('await connection()')
    expect(`${route}\n`).toBe(read(`${app}app/route.ts`))
  })
})
