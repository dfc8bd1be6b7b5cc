import { defineConfig } from 'tsup'

// The main entry stays browser-safe; the Node host, the Postgres store, the Redis bus, the AI SDK
// adapter (`ai` an optional peer, its types only), the conformance suite and the CLI are separate
// entries.
const entries = {
  index: 'src/index.ts',
  'node/index': 'src/node/index.ts',
  'postgres/index': 'src/postgres/index.ts',
  'redis/index': 'src/redis/index.ts',
  'ai-sdk/index': 'src/ai-sdk/index.ts',
  conformance: 'src/conformance/index.ts',
}

export default defineConfig({
  entry: { ...entries, cli: 'src/cli.ts' },
  format: ['esm'],
  dts: { entry: entries },
  clean: true,
  sourcemap: true,
  target: 'es2022',
})
