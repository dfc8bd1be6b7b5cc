import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  // The provider and the hook are client components: a server component that imports them (the
  // Next.js app router) gets them as client references instead of crashing at module load.
  banner: { js: "'use client'" },
})
