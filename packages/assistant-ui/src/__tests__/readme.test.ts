// The README's page is the file the type-check covers, verbatim.
import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8')

it('the README shows readme-page.tsx as its complete page', () => {
  const block = read('../../README.md').match(/<!-- example: page -->\n+```tsx\n([\s\S]*?)\n```/)
  expect(block?.[1]).toBe(read('./readme-page.tsx').trimEnd())
})
