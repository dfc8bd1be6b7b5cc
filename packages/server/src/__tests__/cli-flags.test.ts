import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { cliFlags, flagSynopsis, renderFlagsMarkdown, renderHelp } from '../cli-flags'

// The CLI's flags, its `--help` and the site's server page are one table (cli-flags.ts): these
// fail when any of the three stops being made from it.
const read = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8')
const cliSource = read('../cli.ts')

describe('the CLI flag table [R-SERVER-CLI-DOCS]', () => {
  it('is what --help prints, every flag with its default', () => {
    const help = execFileSync(
      process.execPath,
      ['--import', 'tsx', '--conditions=@preview-chat/source', 'src/cli.ts', '--help'],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8' },
    )
    expect(help.trimEnd()).toBe(renderHelp())
    for (const flag of cliFlags) {
      expect(help).toContain(flagSynopsis(flag))
      if (flag.default !== undefined) expect(help).toContain(`(default: ${flag.default})`)
    }
  })

  it('names every flag the CLI reads, and the CLI reads every flag it names', () => {
    // cli.ts reads each flag by name from what parseArgs made of the table: text('x'),
    // parsed['x'] or parsed.x. A flag read under another name, or documented and never read, fails.
    const read = new Set(
      [
        ...cliSource.matchAll(
          /\b(?:text|defaultOf)\('([a-z-]+)'\)|parsed(?:\['([a-z-]+)'\]|\.([a-z]+))/g,
        ),
      ].map((match) => match[1] ?? match[2] ?? match[3]),
    )
    expect([...read].sort()).toEqual(cliFlags.map((flag) => flag.name).sort())
    expect(cliSource).toContain('parseArgs({ options: parseOptions })')
    expect(cliSource).not.toMatch(/Usage: preview-chat-server \[--/)
  })

  it('is the table of the site’s server page, made from the same rows', () => {
    const markdown = renderFlagsMarkdown()
    for (const flag of cliFlags) {
      const row = markdown
        .split('\n')
        .find((line) => line.startsWith(`| \`${flagSynopsis(flag).replace(/\|/g, '\\|')}\``))
      expect(row, `--${flag.name} has no row`).toBeDefined()
      expect(row).toContain(flag.description.replace(/\|/g, '\\|'))
      if (flag.default !== undefined) expect(row).toContain(`\`${flag.default}\``)
    }
    const prepare = read('../../../../site/prepare.mjs')
    expect(prepare).toContain('cli.renderFlagsMarkdown()')
    expect(prepare).toContain('cli.renderHelp()')
    const page = read('../../../../site/docs/guide/server.mdx')
    expect(page).toContain("import Flags from '../../generated/server-flags.md'")
    expect(page).toMatch(/^<Flags \/>$/m)
    expect(page).toMatch(/^<Help \/>$/m)
  })
})
