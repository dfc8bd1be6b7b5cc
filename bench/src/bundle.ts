/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run, as in tests */
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

const here = fileURLToPath(new URL('.', import.meta.url))

export interface BundleSize {
  minified: number
  gzipped: number
  /** Minified bytes by package, largest first. */
  byPackage: [string, number][]
}

/** Minifies `entry` (ESM source) for the browser with esbuild, peers external, and gzips it (level 9). */
export async function measureBundle(entry: string, external: string[]): Promise<BundleSize> {
  const result = await build({
    stdin: { contents: entry, resolveDir: here, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    external,
    // Our packages from their sources (no build needed); what ships in dist/ is the same code.
    conditions: ['@preview-chat/source'],
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'error',
  })
  const code = result.outputFiles[0]!.contents
  const byPackage = new Map<string, number>()
  for (const output of Object.values(result.metafile.outputs))
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules)/.exec(path)
      const name =
        match?.[1] ??
        (/packages\/([^/]+)\//.exec(path)?.[1]
          ? `@preview-chat/${/packages\/([^/]+)\//.exec(path)![1]}`
          : path)
      byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput)
    }
  return {
    minified: code.byteLength,
    gzipped: gzipSync(code, { level: 9 }).byteLength,
    byPackage: [...byPackage].sort((a, b) => b[1] - a[1]),
  }
}

const reactPeers = ['react', 'react-dom', 'react/jsx-runtime', 'react/jsx-dev-runtime']
/** Our packages' peer dependencies: the app has them already (query-core comes with react-query). */
const ourPeers = [...reactPeers, '@tanstack/react-query', '@tanstack/query-core']

/** The bundles row 6 and `pnpm check:size` measure. */
export const bundles = {
  ours: {
    full: () =>
      measureBundle(
        `export * from '@preview-chat/core'\nexport * from '@preview-chat/react'`,
        ourPeers,
      ),
    /** For information: as if @tanstack/query-core were ours to ship (it is a peer). */
    withQueryCore: () =>
      measureBundle(
        `export * from '@preview-chat/core'\nexport * from '@preview-chat/react'`,
        ourPeers.filter((name) => name !== '@tanstack/query-core'),
      ),
    typical: () =>
      measureBundle(
        `export { createPreviewChatClient } from '@preview-chat/core'\nexport { PreviewChatProvider, usePreviewChat } from '@preview-chat/react'`,
        ourPeers,
      ),
  },
  vercel: {
    // zod is a peer dependency of `ai`.
    full: () =>
      measureBundle(`export * from '@ai-sdk/react'\nexport * from 'ai'`, [...reactPeers, 'zod']),
    typical: () =>
      measureBundle(
        `export { useChat } from '@ai-sdk/react'\nexport { DefaultChatTransport } from 'ai'`,
        [...reactPeers, 'zod'],
      ),
  },
}
