// Packs workspace packages as a user installs them: `pnpm pack` of each into one directory. A
// package whose dist/ is built is packed as it is (no second build); else its `prepack` builds it.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Packs `packages/<name>` of `root` for each name into `destination`; answers each package's
 * tarball as a `file:` specifier for a package.json.
 * @param {string} root
 * @param {string[]} names
 * @param {string} destination
 * @returns {Record<string, string>}
 */
export function packTarballs(root, names, destination) {
  /** @type {Record<string, string>} */
  const specifiers = {}
  for (const name of names) {
    const dir = join(root, 'packages', name)
    const built = existsSync(join(dir, 'dist'))
    const args = [
      'pack',
      '--pack-destination',
      destination,
      ...(built ? ['--config.ignore-scripts=true'] : []),
    ]
    console.log(
      `$ pnpm ${args.join(' ')}  (packages/${name}${built ? ', dist already built' : ''})`,
    )
    execFileSync('pnpm', args, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
    const file = readdirSync(destination).find((f) => f.startsWith(`preview-chat-${name}-`))
    if (!file) throw new Error(`pnpm pack made no tarball for @preview-chat/${name}`)
    specifiers[`@preview-chat/${name}`] = `file:${join(destination, file)}`
  }
  return specifiers
}
