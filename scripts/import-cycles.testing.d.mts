/** Planted trees under a fresh temporary directory (see `import-cycles.testing.mjs`). */
export function plantedTrees(prefix: string): {
  /** Writes `files` (path → text) under a fresh directory named `name`; returns that directory. */
  plant(name: string, files: Record<string, string>): string
  /** Deletes every tree planted. */
  remove(): void
}

/** The import cycle check on `dir` as `pnpm lint` runs it: its exit code and what it printed. */
export function checkAsLint(dir: string): { code: number; output: string }
