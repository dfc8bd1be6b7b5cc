import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

const noReact = ['react', 'react-dom', 'react/*', '@tanstack/react-query']
/** The core's entry points (packages/core/src/*.ts, and `..` for its index): no layer imports one. */
const entryPoints = [
  '^(\\.\\./)+(client|contract|defaults|index|internal|persist|queue)(\\.[jt]s)?$',
  '^\\.\\.(/\\.\\.)*/?$',
]
const platformOnly =
  'platform/ is the browser\'s edge: it may import only platform/ and wire/contract/; take what it needs from above as a type parameter or a callback (see packages/core/README.md, "Files").'
/** no-restricted-imports does not see `import()`, so a layer imports statically (none does today). */
const dynamicImport = {
  selector: 'ImportExpression',
  message: 'import(): import statically, so that the layer rules (no-restricted-imports) see it.',
}

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/coverage/**',
      '**/storybook-static/**',
      '**/node_modules/**',
      // README blocks, checked by tsc (examples/readme-code).
      'examples/readme-code/generated/**',
      // The assistant-ui README's page, written by examples/next-app/readme-page.mjs.
      'examples/next-app/app/readme/*/App.tsx',
      // The docs site's build, and what site/prepare.mjs writes (TypeDoc's pages, msw's worker).
      'site/doc_build/**',
      'site/docs/api/**',
      'site/docs/public/mockServiceWorker.js',
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
    ['^[^.]', '(^|/)(effects|platform)(/|$)', '(^|/)wire/(?!contract(/|$))', ...entryPoints],
    'engine/ is the pure layer: it may import only engine/ and wire/contract/ (see packages/core/README.md, "Files").',
  ),
  layer(
    'packages/core/src/wire/contract/**',
    ['^[^.]', '^\\.\\./'],
    'wire/contract/ is the bottom layer: it may import only wire/contract/.',
  ),
  layer(
    'packages/core/src/wire/*.ts',
    [
      '(^|/)effects(/|$)',
      // engine/'s state, reducer and selectors are not the wire's; its backoff helper is.
      '(^|/)engine/(?!backoff$)',
      ...entryPoints,
    ],
    'wire/ talks to the server: it may not import effects/, engine/ (but engine/backoff) or the entry points.',
  ),
  layer(
    'packages/core/src/platform/**',
    // platform/ is the browser's edge: it reads the globals and hands them up as seams (Timers,
    // ResumeSignal, DraftStorage), so it sits below wire/ and effects/ and knows neither them nor
    // the engine. wire/contract/ (pure, the bottom layer) is all it may share with the rest.
    ['^[^.]', '^\\.\\./(?!wire/contract(/|$))', ...entryPoints],
    platformOnly,
  ),
  layer(
    'packages/core/src/effects/**',
    // effects/ perform the engine's commands with the wire and the platform's seams; the entry
    // points (client, defaults, index, …) are built on them, so importing one is a circle in the
    // making. Of the packages, only what the effects run on: TanStack Query's core (the history
    // query) and zustand's vanilla store (zustand's root imports React; the SSE parser is wire/'s).
    ['^(?!\\.|@tanstack/query-core$|zustand/vanilla$)', ...entryPoints],
    'effects/ may import engine/, wire/, platform/ and effects/, and of the packages only @tanstack/query-core and zustand/vanilla; never an entry point (client, defaults, index, internal, persist, queue, contract): pass what you need from it in the SessionContext (see packages/core/README.md, "Files").',
  ),
  // ---- packages/core: what each layer may touch (issue 27) -----------------------------------
  // engine/ decides from its state and actions alone, so a step can be replayed; effects/ get the
  // clock, timers and randomness injected through their context (`Timers`, `now`, `random`);
  // platform/ is where the browser's globals are read. Shown failing by
  // packages/core/src/__tests__/layers.lint.test.ts.
  ...coreWorld(),
  // ---- end of packages/core ------------------------------------------------------------------
)

// ---- packages/core: the lists behind coreWorld() (issue 27) -------------------------------

/** The core's engine/ and effects/: the globals, properties and syntax each may not touch. */
function coreWorld() {
  const ban = (names, message) => names.map((name) => ({ name, message }))
  const onGlobalThis = (names, message) =>
    names.map((property) => ({ object: 'globalThis', property, message }))
  const clock = 'no clock here: take the time from the action (`at`, `stampedAt`) or the context.'
  const timer = 'no timers here: deadlines are state, the effects set the one alarm.'
  const chance = 'no randomness here: take it from the action (`random`) or the context.'
  const page = 'browser globals are read in platform/ only (packages/core/src/platform).'
  const io = 'no I/O here: the engine returns commands and the effects perform them.'
  const clocks = ['performance']
  const timers = [
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
    'queueMicrotask',
    'requestAnimationFrame',
    'cancelAnimationFrame',
    'requestIdleCallback',
    'cancelIdleCallback',
  ]
  const chances = ['crypto']
  const pages = [
    'window',
    'self',
    'document',
    'navigator',
    'location',
    'localStorage',
    'sessionStorage',
  ]
  const ios = ['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'BroadcastChannel']
  const sharedProperties = [
    { object: 'Date', property: 'now', message: clock },
    { object: 'Math', property: 'random', message: chance },
  ]
  const sharedSyntax = [
    {
      selector: "NewExpression[callee.name='Date'][arguments.length=0]",
      message: `new Date() reads the clock: ${clock}`,
    },
    { selector: "CallExpression[callee.name='Date']", message: `Date() reads the clock: ${clock}` },
  ]
  const files = (folder) => ({
    files: [`packages/core/src/${folder}/**`],
    ignores: ['**/__tests__/**'],
  })
  return [
    {
      ...files('engine'),
      rules: {
        'no-restricted-globals': [
          'error',
          ...ban(clocks, clock),
          ...ban(timers, timer),
          ...ban(chances, chance),
          ...ban(pages, 'the engine is pure: it reads no browser state.'),
          ...ban(ios, io),
          ...ban(['globalThis', 'process'], 'the engine is pure: it reads no global state.'),
        ],
        'no-restricted-properties': ['error', ...sharedProperties],
        'no-restricted-syntax': [
          'error',
          ...sharedSyntax,
          { selector: 'ImportExpression', message: `import(): ${io}` },
        ],
      },
    },
    {
      ...files('effects'),
      rules: {
        'no-restricted-globals': [
          'error',
          ...ban(clocks, clock),
          ...ban(timers, timer),
          ...ban(chances, chance),
          ...ban(pages, page),
        ],
        'no-restricted-properties': [
          'error',
          ...sharedProperties,
          ...onGlobalThis(clocks, clock),
          ...onGlobalThis(timers, timer),
          ...onGlobalThis(chances, chance),
          ...onGlobalThis(pages, page),
        ],
        'no-restricted-syntax': ['error', ...sharedSyntax, dynamicImport],
      },
    },
  ]
}
// ---- end of packages/core ------------------------------------------------------------------

/** A layer of the core: files under `files` may not import what `forbidden` matches. */
function layer(files, forbidden, message) {
  return {
    files: [files],
    ignores: ['**/__tests__/**'],
    rules: {
      'no-restricted-imports': restrictions(forbidden, message),
      // engine/ and effects/ list theirs with their other syntax in coreWorld(), which comes later.
      'no-restricted-syntax': ['error', dynamicImport],
    },
  }
}

/** `no-restricted-imports` forbidding React and what any of the `forbidden` regexes match. */
function restrictions(forbidden, message) {
  return [
    'error',
    {
      patterns: [
        { group: noReact, message: 'The core is framework-agnostic (STYLE.md, habit 1).' },
        { regex: forbidden.join('|'), message },
      ],
    },
  ]
}
