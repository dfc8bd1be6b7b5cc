// What every README's React code must show, checked over all of them: clients made once per
// page (`useState(() => …)`), never at module level, where a server render would share them
// between requests; one set of ids, the msw kit's seeders' defaults.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
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

describe('the READMEs and the docs site', () => {
  it("show the getting-started guide's App and entry, whose prefetch is the App's own client", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    const shown = (name: string) =>
      new RegExp(`<!-- example: ${name} -->\\n+\`\`\`tsx\\n([\\s\\S]*?)\\n\`\`\``).exec(readme)?.[1]
    const site = (file: string) =>
      readFileSync(join(root, 'site/examples/getting-started', file), 'utf8').trimEnd()
    expect(shown('usageApp')).toBe(site('App.tsx'))
    expect(shown('usageMain')).toBe(site('main.tsx'))
    // One client for the page: made once with the credentials, prefetched with, given to the App.
    const main = site('main.tsx')
    expect(main.match(/createPreviewChatClient\(/g)).toHaveLength(1)
    expect(main).toMatch(
      /createPreviewChatClient\(\{[^}]*headers: \{ authorization: 'Bearer alice' \}/,
    )
    expect(main).toContain('client.prefetch(')
    expect(main).toContain('<App client={client} queryClient={queryClient}')
  })

  it('say the queue is kept in IndexedDB, never in localStorage (as queue() keeps it)', () => {
    const pages = readdirSync(join(root, 'site/docs/guide')).map(
      (name) => `site/docs/guide/${name}`,
    )
    const sentences = [...readmes, ...pages].flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .replace(/\s+/g, ' ')
        .split(/(?<=[.:;])\s/)
        .map((sentence) => ({ file, sentence })),
    )
    const wrong = sentences.filter(
      ({ sentence }) =>
        /\bqueue\b/i.test(sentence) &&
        /\b(kept|stored|saved|lives|persisted)\b[^.]*\blocalStorage\b/.test(sentence),
    )
    expect(wrong).toEqual([])
    const react = readFileSync(join(root, 'packages/react/README.md'), 'utf8').replace(/\s+/g, ' ')
    expect(react).toContain('the queue is kept in IndexedDB')
  })
})

describe('the packages', () => {
  it.each(
    readdirSync(join(root, 'packages')).filter((name) =>
      existsSync(join(root, 'packages', name, 'package.json')),
    ),
  )('@preview-chat/%s builds before it packs (a never-built package packed no dist/)', (name) => {
    const manifest = JSON.parse(
      readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'),
    ) as { scripts: Record<string, string>; files: string[] }
    expect(manifest.files).toContain('dist')
    expect(manifest.scripts.prepack).toBe(manifest.scripts.build)
  })
})
