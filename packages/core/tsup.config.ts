import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts', 'src/contract.ts', 'src/internal.ts', 'src/persist.ts', 'src/queue.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
})
