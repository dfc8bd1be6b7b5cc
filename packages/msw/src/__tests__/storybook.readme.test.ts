import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'

// The README's story is a story of this repository (run by `pnpm test:stories`): shown verbatim.
it('shows the story of stories/Chat.stories.tsx verbatim in the README', () => {
  const repo = join(import.meta.dirname, '../../../..')
  const story = readFileSync(join(repo, 'stories/Chat.stories.tsx'), 'utf8')
  const region = /\/\/ #region example: storybookStory\n([\s\S]*?)\n\/\/ #endregion/.exec(story)
  const readme = readFileSync(join(repo, 'packages/msw/README.md'), 'utf8')
  const block = /<!-- example: storybookStory -->\n+```tsx\n([\s\S]*?)\n```/.exec(readme)
  expect(region?.[1]?.length).toBeGreaterThan(1000)
  expect(block?.[1]).toBe(region?.[1])
})
