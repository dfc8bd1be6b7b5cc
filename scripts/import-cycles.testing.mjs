// Test helpers of the import cycle check (`import-cycles.mjs`), shared by the packages whose
// tests plant circles in small trees (packages/core's layers.cycles.test.ts, packages/server's
// import-cycles.test.ts): a tree written under a fresh directory, and the check run as `pnpm
// lint` runs it, in its own process, for its exit code and what it printed.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const script = fileURLToPath(new URL('./import-cycles.mjs', import.meta.url))

/**
 * A place for planted trees under the system's temporary directory: `plant(name, files)` writes
 * `files` (path → text) under a fresh directory of it and returns that directory; `remove()`
 * deletes them all.
 */
export function plantedTrees(prefix) {
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`))
  return {
    plant(name, files) {
      const dir = join(root, name)
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true })
        writeFileSync(join(dir, path), text)
      }
      return dir
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  }
}

/** The check on `dir` as `pnpm lint` runs it: its exit code and what it printed. */
export function checkAsLint(dir) {
  try {
    const output = execFileSync(process.execPath, [script, dir], {
      encoding: 'utf8',
      stdio: 'pipe',
    })
    return { code: 0, output }
  } catch (error) {
    return { code: error.status, output: `${error.stdout}${error.stderr}` }
  }
}
