import { defineConfig } from 'vitest/config'

// The components render into a DOM: jsdom (or happy-dom) as the test environment. The msw kit
// runs the backend in Node (msw's setupServer), so nothing else is needed.
export default defineConfig({ test: { environment: 'jsdom' } })
