// The files a guide page gives its reader: every fenced code block with a `title="path"` in its
// meta (```ts title="app/rest/[...path]/route.ts"), keyed by that path. scripts/consumer-kit.mjs
// writes them into a fresh app, so the guide is what is tested, verbatim.

/** A guide that does not give the files a reader needs, with a code and what to do. */
export class GuideError extends Error {
  /**
   * @param {'guide_file_missing' | 'guide_file_twice' | 'guide_file_path'} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message)
    this.name = 'GuideError'
    this.code = code
  }
}

const fence = /^(`{3,})(\w*)([^\n]*)\n([\s\S]*?)\n\1[ \t]*$/gm

/**
 * The titled code blocks of `markdown` as `{ path: code }`; throws a GuideError when a path in
 * `required` is missing, one is given twice, or one leaves the app's directory.
 * @param {string} markdown
 * @param {{ guide: string, required: string[] }} options
 * @returns {Record<string, string>}
 */
export function guideFiles(markdown, { guide, required }) {
  /** @type {Record<string, string>} */
  const files = {}
  for (const [, , , meta, code] of markdown.matchAll(fence)) {
    const path = /\btitle="([^"]+)"/.exec(meta)?.[1]
    if (path === undefined) continue
    if (path.startsWith('/') || path.split('/').includes('..'))
      throw new GuideError(
        'guide_file_path',
        `${guide}: the code block titled "${path}" leaves the app's directory; title it with a path inside the app (e.g. app/route.ts).`,
      )
    if (path in files)
      throw new GuideError(
        'guide_file_twice',
        `${guide}: two code blocks are titled "${path}"; a reader cannot tell which to write. Title each file's block once.`,
      )
    files[path] = `${code}\n`
  }
  const missing = required.filter((path) => !(path in files))
  if (missing.length > 0)
    throw new GuideError(
      'guide_file_missing',
      `${guide} gives no code block titled ${missing.map((p) => `"${p}"`).join(', ')}: a reader following it cannot write that file. Add the block with \`title="${missing[0]}"\` in its fence's meta.`,
    )
  return files
}
