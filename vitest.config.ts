import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defaultClientConditions, defaultServerConditions } from 'vite'
import { configDefaults, defineConfig } from 'vitest/config'

const sourceCondition = '@preview-chat/source'

// The react package's tests run twice: against React 19 (its devDependency) and against React 18,
// installed apart in packages/react/test/react18 so that react-dom, react-query and testing-library
// there all see React 18.
const react18 = (name: string) =>
  fileURLToPath(new URL(`./packages/react/test/react18/node_modules/${name}`, import.meta.url))
const react18Aliases = [
  'react-dom',
  'react',
  '@testing-library/react',
  '@tanstack/react-query',
].map((name) => ({
  find: new RegExp(`^${name}(/.*)?$`),
  replacement: `${react18(name)}$1`,
}))
const reactTests = {
  root: 'packages/react',
  environment: 'jsdom',
  setupFiles: ['./src/__tests__/setup.ts'],
} as const

/** The test files under `dir`, as paths relative to it; node_modules and dist are not read. */
function testFiles(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((entry) => {
    const path = under ? `${under}/${entry.name}` : entry.name
    if (entry.isDirectory())
      return ['node_modules', 'dist'].includes(entry.name) ? [] : testFiles(dir, path)
    return /\.test\.tsx?$/.test(entry.name) ? [path] : []
  })
}

/**
 * A project whose test files share one module graph (`isolate: false`): fewer modules loaded and
 * transformed again file after file, measured in CONTRIBUTING, "The test pool". A file that
 * replaces a module for its importers (`vi.mock`, `vi.doMock`) cannot share it: the module may have
 * been loaded by another file already, and the replacement would not be seen, so the file would
 * fail (pageHide.test.ts) or pass without testing anything (no-react.test.ts). Such files, found by
 * reading them, run apart in `<name>-mocks`, each in a graph of its own.
 */
function sharingOneGraph<Test extends { name: string; root: string; exclude?: string[] }>(
  test: Test,
) {
  const dir = fileURLToPath(new URL(`./${test.root}/`, import.meta.url))
  const replacing = testFiles(dir).filter((file) =>
    /\bvi\.(do)?[mM]ock\(/.test(readFileSync(join(dir, file), 'utf8')),
  )
  const exclude = [...configDefaults.exclude, ...(test.exclude ?? [])]
  return [
    { extends: true, test: { ...test, exclude: [...exclude, ...replacing], isolate: false } },
    // No project at all when none does: an empty `include` would mean every file.
    ...(replacing.length === 0
      ? []
      : [{ extends: true, test: { ...test, name: `${test.name}-mocks`, include: replacing } }]),
  ]
}

// Workspace packages resolve each other's `src/` through this export condition, so no
// test needs a build first.
export default defineConfig({
  resolve: { conditions: [sourceCondition, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [sourceCondition, ...defaultServerConditions] } },
  test: {
    // test-results/vitest.json feeds the `N passed, N failed` line of .ci/run.
    reporters: ['default', 'json'],
    // A backstop for a loaded 2-core machine, never a figure a test depends on (issue 27, row h):
    // a test takes what it takes, and a hung one still ends.
    testTimeout: 30_000,
    // Two files at a time (vitest's default here is cores − 1, one): the unit step in 285-306 s
    // instead of 446 s on this 2-core machine. The deployment suites, which start three server
    // processes, Postgres and Redis, run after every other file, one at a time (`server-deploy`
    // below), so that no other file shares the cores with them. (Their missed deadline in CI was a
    // bug of their proxy, mended: CONTRIBUTING, "The test pool".)
    maxWorkers: 2,
    outputFile: { json: 'test-results/vitest.json' },
    projects: [
      // The files of core, server and assistant-ui share one module graph: 21-44% less CPU each,
      // measured, every test passing in file order and shuffled (CONTRIBUTING, "The test pool").
      // A file that leaves state behind in a module (a listener, a host, a session) must undo it
      // in its afterAll/afterEach.
      ...sharingOneGraph({ name: 'core', root: 'packages/core', environment: 'node' }),
      ...sharingOneGraph({
        name: 'server',
        root: 'packages/server',
        environment: 'node',
        exclude: ['**/*.pg.test.ts', '**/*.deploy.test.ts'],
      }),
      // The server's tests against a real Postgres (its global setup starts one, or uses
      // PREVIEW_CHAT_TEST_PG_URL): `*.pg.test.ts`.
      {
        extends: true,
        test: {
          name: 'server-pg',
          root: 'packages/server',
          environment: 'node',
          include: ['src/**/*.pg.test.ts'],
          globalSetup: ['./src/__tests__/postgres.global-setup.ts'],
        },
      },
      // The deployment suites (`*.deploy.test.ts`: several server processes behind a proxy, on
      // Postgres and Redis), in the last group of the run, one file at a time with nothing beside.
      {
        extends: true,
        test: {
          name: 'server-deploy',
          root: 'packages/server',
          environment: 'node',
          include: ['src/**/*.deploy.test.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
      // In worker threads, not child processes: 15-17% less CPU, measured (CONTRIBUTING, "The
      // test pool"). Not `isolate: false`: its files share module state (two of them fail).
      {
        extends: true,
        test: { name: 'msw', root: 'packages/msw', environment: 'node', pool: 'threads' },
      },
      // The repository's own checks (changesets, API reports, tarball contents), on planted cases.
      { extends: true, test: { name: 'scripts', root: 'scripts', environment: 'node' } },
      // The bench's checks of its own "before" code (e.g. win 3's parsers against valibot's).
      { extends: true, test: { name: 'bench', root: 'bench', environment: 'node' } },
      // The example app's components, rendered from the reference backend's states.
      { extends: true, test: { name: 'chat-app', root: 'examples/chat-app', environment: 'node' } },
      { extends: true, test: { name: 'react', ...reactTests, env: { EXPECTED_REACT: '19' } } },
      {
        extends: true,
        resolve: { alias: react18Aliases },
        test: {
          name: 'react18',
          ...reactTests,
          env: { EXPECTED_REACT: '18' },
          // zustand's hooks import react themselves: inline them so the aliases give them React 18.
          server: { deps: { inline: ['zustand'] } },
        },
      },
      ...sharingOneGraph({
        name: 'assistant-ui',
        root: 'packages/assistant-ui',
        environment: 'jsdom',
        setupFiles: ['./src/__tests__/setup.ts'],
      }),
    ],
  },
})
