import type { NextConfig } from 'next'

// Where the chat's backend runs: the reference server in development
// (`npx -p @preview-chat/server preview-chat-server`, port 4317), your own in production. Rewrites
// are resolved at build time (`next build` reads this), and proxy each response as it comes: the
// turn's stream and the SSE push unbuffered.
const server = process.env.PREVIEW_CHAT_SERVER ?? 'http://127.0.0.1:4317'

const config: NextConfig = {
  // As `create-next-app` turns them on: a page that reads the request awaits it in `<Suspense>`.
  cacheComponents: true,
  partialPrefetching: true,
  async rewrites() {
    return [{ source: '/rest/:path*', destination: `${server}/rest/:path*` }]
  },
}

export default config
