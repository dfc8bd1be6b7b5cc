// tsconfig.packages.json checks the five packages in one program for `pnpm typecheck`, with the
// base's options: it stands for their own tsconfigs only while each is the base's with its files.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const read = (path: string) =>
  JSON.parse(
    // The tsconfigs' line comments (`// …` at a line's start), which JSON does not take.
    readFileSync(join(root, path), 'utf8').replace(/^\s*\/\/.*$/gm, ''),
  ) as { extends?: string; compilerOptions?: object; include?: string[] }

const packages = readdirSync(join(root, 'packages')).filter((dir) =>
  existsSync(join(root, 'packages', dir, 'tsconfig.json')),
)

it('every package is the base with its own files, and the one program includes those files', () => {
  const union = read('tsconfig.packages.json')
  expect(union.extends).toBe('./tsconfig.base.json')
  expect(union.compilerOptions).toBeUndefined()
  expect(packages.length).toBeGreaterThanOrEqual(5)
  for (const dir of packages) {
    const own = read(`packages/${dir}/tsconfig.json`)
    // A package that needs options of its own needs its own program again: take it out of
    // tsconfig.packages.json's include, and let `pnpm typecheck` run its tsconfig.
    expect({ dir, extends: own.extends, compilerOptions: own.compilerOptions }).toEqual({
      dir,
      extends: '../../tsconfig.base.json',
      compilerOptions: undefined,
    })
    for (const path of own.include ?? [])
      expect(
        [`packages/*/${path}`, `packages/${dir}/${path}`].some((one) =>
          union.include?.includes(one),
        ),
        `packages/${dir}'s "${path}"`,
      ).toBe(true)
  }
})
