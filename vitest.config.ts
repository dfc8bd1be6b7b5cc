import { defaultClientConditions, defaultServerConditions } from 'vite'
import { defineConfig } from 'vitest/config'

const sourceCondition = '@preview-chat/source'

// Workspace packages resolve each other's `src/` through this export condition, so no
// test needs a build first.
export default defineConfig({
  resolve: { conditions: [sourceCondition, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [sourceCondition, ...defaultServerConditions] } },
  test: {
    // test-results/vitest.json feeds the `N passed, N failed` line of .ci/run.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
    projects: [
      { extends: true, test: { name: 'core', root: 'packages/core', environment: 'node' } },
      { extends: true, test: { name: 'server', root: 'packages/server', environment: 'node' } },
      { extends: true, test: { name: 'msw', root: 'packages/msw', environment: 'node' } },
      { extends: true, test: { name: 'react', root: 'packages/react', environment: 'jsdom' } },
    ],
  },
})
