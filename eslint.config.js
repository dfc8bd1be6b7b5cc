import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

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
      'no-restricted-imports': [
        'error',
        { patterns: ['react', 'react-dom', 'react/*', '@tanstack/react-query'] },
      ],
    },
  },
)
