/** What is wrong with a tarball of `manifest` holding `files` (see tarball-contents.mjs). */
export function tarballProblems(
  manifest: Record<string, unknown>,
  files: string[],
  read: (file: string) => string,
): string[]
/** Lists and checks a .tgz as `tarballProblems` does. */
export function checkTarball(
  tarball: string,
  manifest: Record<string, unknown>,
): { files: string[]; problems: string[] }
