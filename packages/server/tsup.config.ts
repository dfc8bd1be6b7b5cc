import { defineConfig } from 'tsup'

export default defineConfig({
  // The main entry stays browser-safe; the Node host, the Postgres store, the Redis bus, the CLI
  // and the conformance suite are separate entries.
  entry: {
    index: 'src/index.ts',
    'node/index': 'src/node/index.ts',
    'postgres/index': 'src/postgres/index.ts',
    'redis/index': 'src/redis/index.ts',
    cli: 'src/cli.ts',
    conformance: 'src/conformance/index.ts',
  },
  format: ['esm'],
  dts: {
    entry: {
      index: 'src/index.ts',
      'node/index': 'src/node/index.ts',
      'postgres/index': 'src/postgres/index.ts',
      'redis/index': 'src/redis/index.ts',
      conformance: 'src/conformance/index.ts',
    },
  },
  clean: true,
  sourcemap: true,
  target: 'es2022',
})
