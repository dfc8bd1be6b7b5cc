import { defineConfig } from 'tsup'

export default defineConfig({
  // Named entries keep dist/ laid out as the exports map says (`dist/devtools/index.js`).
  entry: {
    index: 'src/index.ts',
    'devtools/index': 'src/devtools/index.ts',
    'devtools/production': 'src/devtools/production.ts',
    persist: 'src/persist.ts',
    queue: 'src/queue.ts',
  },
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  // The provider and the hook are client components: a server component that imports them (the
  // Next.js app router) gets them as client references instead of crashing at module load.
  banner: { js: "'use client'" },
})
