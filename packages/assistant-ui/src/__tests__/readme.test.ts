// The README's page is the file the type-check covers, verbatim; its other promises are checked
// against the code that keeps them.
import { readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8')
const readme = read('../../README.md')

it('the README shows readme-page.tsx as its complete page', () => {
  const block = readme.match(/<!-- example: page -->\n+```tsx\n([\s\S]*?)\n```/)
  expect(block?.[1]).toBe(read('./readme-page.tsx').trimEnd())
})

it('the README shows the Next page that e2e/next-app.spec.ts runs the complete page in', () => {
  const block = readme.match(/<!-- example: nextPage -->\n+```tsx\n([\s\S]*?)\n```/)
  expect(block?.[1]).toBe(
    read('../../../../examples/next-app/app/readme/[threadId]/page.tsx').trimEnd(),
  )
})

it("imports the queue's parts from /queue, as its text says, in every block", () => {
  const blocks = [...readme.matchAll(/```tsx\n([\s\S]*?)\n```/g)].map(([, code]) => code ?? '')
  const queueBlocks = blocks.filter((code) => code.includes('useQueuedMessage'))
  expect(queueBlocks.length).toBeGreaterThan(0)
  for (const code of queueBlocks) {
    const main = /import \{([^}]*)\} from '@preview-chat\/assistant-ui'/.exec(code)?.[1] ?? ''
    expect(main).not.toMatch(/useQueuedMessage|PreviewChatQueueResume|previewChatQueue/)
    expect(code).toMatch(/from '@preview-chat\/assistant-ui\/queue'/)
  }
})

describe('the README says', () => {
  it('which Node the assistant-ui path needs, as the installed nanoid says', () => {
    // @assistant-ui/react → @assistant-ui/core → nanoid 6, whose engines leave out Node 20.
    const react = realpathSync(join(import.meta.dirname, '../../node_modules/@assistant-ui/react'))
    const core = JSON.parse(readFileSync(join(react, '../core/package.json'), 'utf8')) as {
      dependencies: Record<string, string>
    }
    expect(core.dependencies.nanoid).toMatch(/^\^?6/)
    expect(readme).toContain('**Node 22 or later for this path.**')
    expect(readme).toContain('`nanoid@6`')
  })

  it('smooth={false} for markdown, as the example app passes it', () => {
    expect(readme).toContain('<MarkdownTextPrimitive smooth={false} />')
    expect(read('../../../../examples/assistant-ui/src/Message.tsx')).toContain('smooth={false}')
  })

  it('the jsdom setup the tests themselves use', () => {
    expect(readme).toContain("setupFiles: ['@preview-chat/assistant-ui/testing']")
    expect(read('./setup.ts')).toContain("import '@preview-chat/assistant-ui/testing'")
    const manifest = JSON.parse(read('../../package.json')) as { exports: Record<string, unknown> }
    expect(manifest.exports['./testing']).toBeDefined()
  })
})
