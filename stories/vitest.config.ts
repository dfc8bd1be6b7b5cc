import { storybookTest } from '@storybook/addon-vitest/vitest-plugin'
import { playwright } from '@vitest/browser-playwright'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { chromiumLaunchOptions } from '../e2e/chromium'

const repo = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url))

/** Debian's Chromium, headless, as the e2e tests launch it; no browser is ever downloaded. */
export const chromium = chromiumLaunchOptions

// The stories run as tests (each one renders, then its play function asserts) in the browser,
// and a Node test screenshots the built Storybook. test-results/stories.json feeds the
// `N passed, N failed` line of .ci/run (scripts/test-summary.mjs).
export default defineConfig({
  test: {
    reporters: ['default', 'json'],
    outputFile: { json: repo('test-results/stories.json') },
    projects: [
      {
        extends: true,
        plugins: [storybookTest({ configDir: repo('.storybook') })],
        test: {
          name: 'stories',
          testTimeout: 20_000,
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({ launchOptions: chromium }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
      {
        extends: true,
        test: {
          name: 'screenshots',
          include: ['screenshots.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
        },
      },
    ],
  },
})
