/**
 * create-vite's react-ts tsconfig (its app and node configs in one file), as an app made with
 * `npm create vite` has it: the fresh apps of scripts/consumer-smoke.mjs and
 * scripts/docs-examples.mjs are type-checked with it. What differs between them is an option:
 * `skipLibCheck` (false checks the packages' own d.ts too), `noUnusedLocals`, the `types` and the
 * files to `include`.
 *
 * @param {{ include: string[], types: string[], skipLibCheck: boolean, noUnusedLocals?: boolean }} options
 */
export function createViteTsconfig({ include, types, skipLibCheck, noUnusedLocals = false }) {
  return {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023', 'DOM', 'DOM.Iterable'],
      module: 'ESNext',
      moduleResolution: 'Bundler',
      jsx: 'react-jsx',
      strict: true,
      ...(noUnusedLocals && { noUnusedLocals }),
      skipLibCheck,
      noEmit: true,
      types,
    },
    include,
  }
}
