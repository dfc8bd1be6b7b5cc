/** The import circles among the TypeScript files below `dir` (see import-cycles.mjs). */
export function findImportCycles(dir: string): { circle: string[]; files: string[] }[]
