// What every README's React code must show, checked over all of them: clients made once per
// page (`useState(() => …)`), never at module level, where a server render would share them
// between requests; one set of ids, the msw kit's seeders' defaults.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../../../..')
const readmes = [
  'README.md',
  ...readdirSync(join(root, 'packages')).map((name) => `packages/${name}/README.md`),
].filter((file) => {
  try {
    readFileSync(join(root, file))
    return true
  } catch {
    return false
  }
})
const blocks = readmes.flatMap((file) =>
  [...readFileSync(join(root, file), 'utf8').matchAll(/```tsx\n([\s\S]*?)\n```/g)].map(
    ([, code]) => ({ file, code: code ?? '' }),
  ),
)
const rendering = blocks.filter(({ code }) => code.includes('<PreviewChatProvider'))

describe('the READMEs', () => {
  it('make the clients of a rendered page per page, not per module (safe under SSR)', () => {
    expect(rendering.length).toBeGreaterThanOrEqual(4)
    for (const { file, code } of rendering) {
      const moduleLevel = code.match(
        /^(?:export )?const \w+ = (?:createPreviewChatClient\(|new QueryClient\()/m,
      )
      expect(moduleLevel?.[0], `${file}: a client at module level`).toBeUndefined()
    }
  })

  it("use the msw kit's default ids in every rendered page", () => {
    for (const { file, code } of rendering) {
      for (const [, projectId] of code.matchAll(/projectId: '([^']+)'/g))
        expect([file, projectId]).toEqual([file, expect.stringMatching(/^(demo-project|p)$/)])
      expect(code, file).not.toMatch(/projectId: 'p1'/)
    }
  })
})

describe('the packages', () => {
  it.each(['react', 'assistant-ui', 'msw'])(
    '@preview-chat/%s builds before it packs (a never-built package packed no dist/)',
    (name) => {
      const manifest = JSON.parse(
        readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'),
      ) as { scripts: Record<string, string>; files: string[] }
      expect(manifest.files).toContain('dist')
      expect(manifest.scripts.prepack).toBe(manifest.scripts.build)
    },
  )
})
