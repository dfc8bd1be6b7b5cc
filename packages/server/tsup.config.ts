import { defineConfig } from 'tsup'

export default defineConfig({
  // The main entry stays browser-safe; the Node host, the AI SDK adapter (`ai` an optional peer,
  // its types only) and the CLI are separate entries.
  entry: {
    index: 'src/index.ts',
    'node/index': 'src/node/index.ts',
    'ai-sdk/index': 'src/ai-sdk/index.ts',
    cli: 'src/cli.ts',
  },
  format: ['esm'],
  dts: {
    entry: {
      index: 'src/index.ts',
      'node/index': 'src/node/index.ts',
      'ai-sdk/index': 'src/ai-sdk/index.ts',
    },
  },
  clean: true,
  sourcemap: true,
  target: 'es2022',
})
