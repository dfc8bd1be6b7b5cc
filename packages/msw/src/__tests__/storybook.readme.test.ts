// The README's Storybook section, held to the code: its stories are this repository's stories
// (run by `pnpm test:stories`), shown verbatim; what it says of the seeders' ids, the client's
// retry, the install command and the seeders' types is what the code does.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPreviewChatHandlers, type SeededSuspension, type SeededThread } from '../index'

const repo = join(import.meta.dirname, '../../../..')
const read = (path: string) => readFileSync(join(repo, path), 'utf8')
const readme = read('packages/msw/README.md')
const storybook = readme.slice(
  readme.indexOf('## Storybook'),
  readme.indexOf('\n## ', readme.indexOf('## Storybook') + 1),
)
const stories = read('stories/Chat.stories.tsx')

describe("the README's Storybook section", () => {
  it.each(['storybookStory', 'storybookFailingReads', 'storybookStreaming'])(
    'shows the story region %s of stories/Chat.stories.tsx verbatim',
    (name) => {
      const region = new RegExp(`// #region example: ${name}\\n([\\s\\S]*?)\\n// #endregion`).exec(
        stories,
      )
      const block = new RegExp(
        `<!-- example: ${name} -->\\n+\`\`\`tsx\\n([\\s\\S]*?)\\n\`\`\``,
      ).exec(storybook)
      expect(region?.[1]?.length).toBeGreaterThan(500)
      expect(block?.[1]).toBe(region?.[1])
    },
  )

  it("states the seeders' ids, which are the root README component's", async () => {
    const mock = createPreviewChatHandlers({ deltaMs: 0, snapshotMs: 5 })
    const seeded: SeededThread = await mock.seed.thread()
    await mock.close()
    const { projectId, agentId } = seeded.key
    expect(storybook).toContain(`\`${projectId}\` and\n\`${agentId}\` by default`)
    expect(read('README.md')).toContain(`projectId: '${projectId}', agentId: '${agentId}'`)
    expect(read('README.md')).not.toMatch(/projectId: 'p1'/)
  })

  it("says when a failed read heals: the core client's first retry", () => {
    const client = read('packages/core/src/client.ts')
    expect(client).toContain('retry: options.retry ?? { baseMs: 500, maxMs: 15_000 }')
    expect(storybook).toContain('first ~0.5 s later\n(`retry`, 500 ms doubling to 15 s)')
    expect(storybook).toContain('`failNextReads(Infinity)`')
  })

  it('installs the worker without a prompt, and makes a client per story', () => {
    expect(storybook).toContain('npx msw init public/ --save\n')
    expect(storybook).not.toMatch(/npx msw init public\/\n/)
    expect(storybook).toContain('**One client per story.**')
    expect(storybook).toContain('const [clients] = useState(() => ({')
  })

  it('names the types its seeders return', () => {
    // Compiles only while the package exports them under these names.
    const names: [SeededThread | undefined, SeededSuspension | undefined] = [undefined, undefined]
    expect(names).toHaveLength(2)
    for (const name of ['SeededThread', 'SeededRunningTurn', 'SeededSuspension'])
      expect(storybook).toContain(`\`${name}\``)
  })
})
