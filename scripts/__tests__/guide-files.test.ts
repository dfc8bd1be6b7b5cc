import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { GuideError, guideFiles } from '../guide-files.mjs'

const guide = 'site/docs/guide/own-backend.mdx'
const page = readFileSync(new URL(`../../${guide}`, import.meta.url), 'utf8')
const required = ['app/rest/[...path]/route.ts', 'app/chat-backend.server.ts']

/** What guideFiles throws for `markdown`, or a failure when it throws nothing. */
function refusal(markdown: string): GuideError {
  try {
    guideFiles(markdown, { guide, required })
  } catch (error) {
    if (error instanceof GuideError) return error
    throw error
  }
  throw new Error('guideFiles accepted a broken guide')
}

describe('the guide "Your own backend" as files', () => {
  it('gives the Next.js app its backend, sign-in and route, verbatim [R-DOCS-OWN-BACKEND-RUNS]', () => {
    const files = guideFiles(page, { guide, required })
    expect(Object.keys(files).sort()).toEqual([
      'app/auth.server.ts',
      'app/chat-backend.server.ts',
      'app/rest/[...path]/route.ts',
      'app/sign-in/route.ts',
    ])
    expect(files['app/rest/[...path]/route.ts']).toContain(
      "import { backend } from '../../chat-backend.server'",
    )
    // A user's file: by package name, nothing of the repository.
    for (const code of Object.values(files)) expect(code).not.toMatch(/from '\.\.\/\.\.\/\.\.\//)
  })

  it('fails with a typed error when the route file is missing from the guide [R-DOCS-OWN-BACKEND-RUNS]', () => {
    const broken = page.replace(
      /```ts title="app\/rest\/\[\.\.\.path\]\/route\.ts"[\s\S]*?\n```\n/,
      '',
    )
    expect(broken).not.toBe(page)
    const error = refusal(broken)
    expect(error.code).toBe('guide_file_missing')
    expect(error.message).toBe(
      `${guide} gives no code block titled "app/rest/[...path]/route.ts": a reader following it cannot write that file. Add the block with \`title="app/rest/[...path]/route.ts"\` in its fence's meta.`,
    )
  })

  it('fails when one path is titled twice or leaves the app', () => {
    const block = (title: string) => `\`\`\`ts title="${title}"\nexport {}\n\`\`\`\n`
    expect(refusal(page + block('app/chat-backend.server.ts')).code).toBe('guide_file_twice')
    expect(refusal(page + block('../outside.ts')).code).toBe('guide_file_path')
  })

  it('reads only titled blocks, with longer fences and any language', () => {
    const markdown = [
      '```sh\nnpm install x\n```',
      '````tsx title="app/page.tsx"\nconst a = "```"\n````',
      '```ts title="app/rest/[...path]/route.ts"\nexport const GET = 1\n```',
      '```ts title="app/chat-backend.server.ts"\nexport const backend = 1\n```',
    ].join('\n\n')
    expect(guideFiles(markdown, { guide, required })).toEqual({
      'app/page.tsx': 'const a = "```"\n',
      'app/rest/[...path]/route.ts': 'export const GET = 1\n',
      'app/chat-backend.server.ts': 'export const backend = 1\n',
    })
  })
})
