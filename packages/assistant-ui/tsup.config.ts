import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts', 'src/testing.ts', 'src/queue.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  // The runtime hook is a client hook: a server component that imports it (the Next.js app
  // router) gets client references instead of crashing at module load.
  banner: { js: "'use client'" },
})
