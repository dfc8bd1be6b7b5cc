import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

const noReact = ['react', 'react-dom', 'react/*', '@tanstack/react-query']

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/coverage/**',
      '**/storybook-static/**',
      '**/node_modules/**',
      // README blocks, checked by tsc (examples/readme-code).
      'examples/readme-code/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['**/*.tsx', 'packages/react/**/*.ts', 'examples/**/*.ts', 'stories/**/*.ts'],
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  {
    // In tests a failed `!` is a failed test, which is what an assertion would say too.
    files: ['**/__tests__/**', '**/*.test.ts', '**/*.test.tsx'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Stand-ins for browser classes (WebSocket, BroadcastChannel) are classes with a constructor.
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
  {
    // The engine must stay framework-agnostic (STYLE.md, habit 1).
    files: ['packages/core/src/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: noReact }],
    },
  },
  // The core's layers (packages/core/README.md, "Files"): each imports only what is below it.
  layer(
    'packages/core/src/engine/**',
    // engine/ is pure: it decides, and imports nothing but itself and the wire contract.
    [
      '^[^.]',
      '(^|/)(effects|platform)(/|$)',
      '(^|/)wire/(?!contract(/|$))',
      '^(\\.\\./)+(client|index|internal|contract)$',
    ],
    'engine/ is the pure layer: it may import only engine/ and wire/contract/ (see packages/core/README.md, "Files").',
  ),
  layer(
    'packages/core/src/wire/contract/**',
    ['^[^.]', '^\\.\\./'],
    'wire/contract/ is the bottom layer: it may import only wire/contract/.',
  ),
  layer(
    'packages/core/src/wire/*.ts',
    ['(^|/)effects(/|$)', '^(\\.\\./)+(client|index|internal|contract)$'],
    'wire/ talks to the server: it may not import effects/ or the entry points.',
  ),
)

/** A layer of the core: files under `files` may not import what `forbidden` matches. */
function layer(files, forbidden, message) {
  return {
    files: [files],
    ignores: ['**/__tests__/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: noReact, message: 'The core is framework-agnostic (STYLE.md, habit 1).' },
            { regex: forbidden.join('|'), message },
          ],
        },
      ],
    },
  }
}
