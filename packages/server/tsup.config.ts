import { defineConfig } from 'tsup'

export default defineConfig({
  // The main entry stays browser-safe; the Node host, the CLI and the conformance suite are
  // separate entries.
  entry: {
    index: 'src/index.ts',
    'node/index': 'src/node/index.ts',
    cli: 'src/cli.ts',
    conformance: 'src/conformance/index.ts',
  },
  format: ['esm'],
  dts: {
    entry: {
      index: 'src/index.ts',
      'node/index': 'src/node/index.ts',
      conformance: 'src/conformance/index.ts',
    },
  },
  clean: true,
  sourcemap: true,
  target: 'es2022',
})
