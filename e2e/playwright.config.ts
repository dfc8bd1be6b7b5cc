import { defineConfig } from '@playwright/test'
import { fileURLToPath } from 'node:url'
import { chromiumLaunchOptions } from './chromium'

const results = fileURLToPath(new URL('../test-results/', import.meta.url))

export default defineConfig({
  testDir: '.',
  // Not test-results/ itself: Playwright empties its outputDir, and the other runners' reports
  // live there too.
  outputDir: `${results}playwright-artifacts`,
  // One worker: each test holds two browser pages and a server that paces its turns; on a 2-core
  // machine running them side by side only makes the timings noisy.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  forbidOnly: Boolean(process.env.CI),
  reporter: [['list'], ['json', { outputFile: `${results}playwright.json` }]],
  use: {
    browserName: 'chromium',
    launchOptions: chromiumLaunchOptions,
    viewport: { width: 1100, height: 750 },
    screenshot: 'only-on-failure',
    actionTimeout: 10_000,
    navigationTimeout: 15_000,
  },
})
