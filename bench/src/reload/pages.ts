/**
 * The bench's own pages (`floor.tsx`, `readme.tsx`): one entry bundled by esbuild for the browser
 * (production React; the library from its sources), and an HTML page that loads it.
 */
import { build } from 'esbuild'
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

/**
 * Bundles `entry` (a file beside this one) into `script` and writes `html`, a page that loads it
 * from `src`. Unminified, esbuild keeps a `// path` line above each module (`profile.ts`).
 * Returns the script's size in bytes.
 */
export async function buildPage(options: {
  entry: string
  script: string
  html: string
  src: string
  title: string
  minify: boolean
}): Promise<number> {
  const built = await build({
    entryPoints: [fileURLToPath(new URL(options.entry, import.meta.url))],
    bundle: true,
    minify: options.minify,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    conditions: ['@preview-chat/source'],
    define: { 'process.env.NODE_ENV': '"production"' },
    outfile: options.script,
    metafile: true,
  })
  await writeFile(
    options.html,
    `<!doctype html>\n<html lang="en"><head><meta charset="UTF-8" /><title>${options.title}</title>` +
      `<script type="module" src="${options.src}"></script></head>` +
      '<body><div id="root"></div></body></html>\n',
  )
  return Object.values(built.metafile.outputs)[0]?.bytes ?? 0
}
