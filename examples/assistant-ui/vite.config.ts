import { defaultClientConditions, defineConfig } from 'vite'

// The reference server the dev server proxies `/rest` (and the push WebSocket) to.
const server = process.env.PREVIEW_CHAT_SERVER ?? 'http://127.0.0.1:4317'

export default defineConfig({
  // Workspace packages are read from their sources: the app needs no build of them.
  resolve: { conditions: ['@preview-chat/source', ...defaultClientConditions] },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    // assistant-ui and markdown make one chunk of about 850 KB (260 KB gzipped); an example needs
    // no code splitting.
    chunkSizeWarningLimit: 1000,
    rolldownOptions: {
      // Libraries mark their hooks "use client" for server components; meaningless in this SPA.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning)
      },
    },
  },
  server: {
    port: 5174,
    strictPort: true,
    proxy: { '/rest': { target: server, ws: true } },
  },
  preview: {
    port: 4174,
    proxy: { '/rest': { target: server, ws: true } },
  },
})
