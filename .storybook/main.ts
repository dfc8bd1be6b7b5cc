import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defaultClientConditions, mergeConfig, type Plugin } from 'vite'
import type { StorybookConfig } from '../stories/support/storybookTypes'

// Storybook and the stories' dependencies belong to the `stories` workspace package (pnpm installs
// them under stories/node_modules, not at the root): name the framework and addons by path, and
// let Vite resolve from there.
const storiesDir = fileURLToPath(new URL('../stories/', import.meta.url))
const fromStories = createRequire(`${storiesDir}package.json`)
const packageDir = (name: string) => dirname(fromStories.resolve(`${name}/package.json`))

const config: StorybookConfig = {
  stories: ['../stories/**/*.stories.tsx'],
  framework: { name: packageDir('@storybook/react-vite'), options: {} },
  addons: [packageDir('@storybook/addon-vitest')],
  core: { disableTelemetry: true, disableWhatsNewNotifications: true },
  // No docs pages: prop tables would only cost build time.
  typescript: { reactDocgen: false },
  async viteFinal(viteConfig) {
    return mergeConfig(viteConfig, {
      root: storiesDir,
      // Workspace packages are read from their sources: Storybook needs no build of them.
      resolve: { conditions: ['@preview-chat/source', ...defaultClientConditions] },
      oxc: { jsx: { runtime: 'automatic' } },
      plugins: [mswWorker()],
      build: {
        // A story bundle carries React, msw and the whole reference backend; size is no concern.
        chunkSizeWarningLimit: 2000,
        rolldownOptions: {
          // React Query marks its hooks "use client" for server components; meaningless here.
          onwarn(warning: { code?: string }, warn: (warning: { code?: string }) => void) {
            if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning)
          },
        },
      },
    })
  },
}

export default config

/**
 * The stories' backend answers in msw's service worker. It is served at the site's root (dev
 * server, Vitest browser mode) and emitted beside `iframe.html` in a build, always from the
 * installed msw: the worker cannot drift from the library that talks to it, and no generated copy
 * is kept in the repository.
 */
function mswWorker(): Plugin {
  const file = 'mockServiceWorker.js'
  const source = () => readFileSync(fromStories.resolve(`msw/${file}`), 'utf8')
  return {
    name: 'preview-chat:msw-worker',
    configureServer(server) {
      server.middlewares.use((request, response, next) => {
        if (request.url?.split('?')[0] !== `/${file}`) return next()
        response.setHeader('Content-Type', 'text/javascript')
        response.setHeader('Cache-Control', 'no-store')
        response.end(source())
      })
    },
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: file, source: source() })
    },
  }
}
