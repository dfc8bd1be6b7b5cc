import type { NextConfig } from 'next'

// The reference server (`pnpm run server --port 4317`). Rewrites are resolved at build time and
// kept in the build's routes manifest, so this is read by `next build` (and `next dev`).
const server = process.env.PREVIEW_CHAT_SERVER ?? 'http://127.0.0.1:4317'

const config: NextConfig = {
  // What `create-next-app@latest` (16.4.3) turns on: pages are prerendered and cached by default,
  // and a page that reads the request (`params`, `searchParams`, randomness) says so (see
  // app/page.tsx, app/t/[threadId]/page.tsx and the core README's "Next.js" section).
  cacheComponents: true,
  partialPrefetching: true,
  // `dist/`, not `.next/`: the repository's ignores (git, ESLint, Prettier) already cover it.
  distDir: 'dist',
  // `pnpm typecheck` checks this app with the rest of the workspace; the build need not again.
  typescript: { ignoreBuildErrors: true },
  // Same-origin `/rest`, as the Vite demo's proxy: the turn streams and the SSE push channel are
  // proxied response by response, unbuffered.
  async rewrites() {
    return [{ source: '/rest/:path*', destination: `${server}/rest/:path*` }]
  },
}

export default config
