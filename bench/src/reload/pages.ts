/**
 * The bench's own pages (`floor.tsx`, `readme.tsx`): one entry bundled by esbuild for the browser
 * (production React; the library from its sources), and an HTML page that loads it.
 */
import { build } from 'esbuild'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
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

/**
 * The same pages built the way an app builds them: `vite build` in production mode (Vite's own
 * `process.env.NODE_ENV` define, minified, module preload), the workspace packages read as the
 * demo reads them (`@preview-chat/source`, as `examples/chat-app/vite.config.ts`). The pages are
 * `bench-floor.html` and `bench-readme.html` beside this file; written with their assets into
 * `outDir`. Returns the bytes of the JavaScript each page loads (its entry and what it imports).
 */
export async function buildPagesWithVite(outDir: string): Promise<Record<string, number>> {
  const { build: viteBuild, defaultClientConditions } = await import('vite')
  const root = fileURLToPath(new URL('.', import.meta.url))
  const pages = ['bench-floor', 'bench-readme']
  await viteBuild({
    root,
    configFile: false,
    logLevel: 'error',
    mode: 'production',
    resolve: { conditions: ['@preview-chat/source', ...defaultClientConditions] },
    oxc: { jsx: { runtime: 'automatic' } },
    build: {
      outDir,
      emptyOutDir: false,
      manifest: 'bench-manifest.json',
      rolldownOptions: {
        input: Object.fromEntries(pages.map((p) => [p, join(root, `${p}.html`)])),
        onwarn(warning, warn) {
          if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning)
        },
      },
    },
  })
  const manifest = JSON.parse(
    await readFile(join(outDir, 'bench-manifest.json'), 'utf8'),
  ) as Record<string, { file: string; imports?: string[] }>
  const sizes: Record<string, number> = {}
  for (const page of pages) {
    const files = new Set<string>()
    const walk = (key: string) => {
      const chunk = manifest[key]
      if (!chunk || files.has(chunk.file)) return
      files.add(chunk.file)
      for (const i of chunk.imports ?? []) walk(i)
    }
    walk(`${page}.html`)
    if (files.size === 0) throw new Error(`vite build: no ${page}.html in its manifest`)
    for (const file of files)
      sizes[page] = (sizes[page] ?? 0) + (await readFile(join(outDir, file))).length
  }
  return sizes
}
