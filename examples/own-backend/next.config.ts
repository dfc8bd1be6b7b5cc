import type { NextConfig } from 'next'

// No rewrites: `/rest` is this app's own route handler (app/rest/[...path]/route.ts).
const config: NextConfig = {
  // `dist/`, not `.next/`: the repository's ignores (git, ESLint, Prettier) already cover it.
  distDir: 'dist',
  // `pnpm typecheck` checks this app with the rest of the workspace; the build need not again.
  typescript: { ignoreBuildErrors: true },
}

export default config
