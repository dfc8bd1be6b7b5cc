/** A guide that does not give the files a reader needs (see guide-files.mjs). */
export class GuideError extends Error {
  constructor(code: 'guide_file_missing' | 'guide_file_twice' | 'guide_file_path', message: string)
  readonly code: 'guide_file_missing' | 'guide_file_twice' | 'guide_file_path'
}
/** The titled code blocks of a guide page as `{ path: code }`. */
export function guideFiles(
  markdown: string,
  options: { guide: string; required: string[] },
): Record<string, string>
