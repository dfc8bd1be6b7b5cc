/** The import circles among the TypeScript files below `dir` (see import-cycles.mjs). */
export function findImportCycles(dir: string): { circle: string[]; files: string[] }[]
/** What `pnpm lint` checks when it names no directory (paths from the repository's root). */
export const defaultDirs: readonly string[]
