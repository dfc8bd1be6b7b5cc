// `pnpm test:docs-examples`: the docs site's examples as a user has them. Packs the packages (as
// built: scripts/pack-tarballs.mjs), installs them once in a temporary folder outside the
// repository with what each app of the guides needs, and makes there one fresh app per guide from
// the files the guides show (site/examples/, each by the name the page gives it; the React Router
// page's titled code blocks, verbatim):
//
// - Testing guide: `vitest run` of Getting started's App.test.tsx with the vitest.config.ts the
//   guide shows beside it (jsdom, the msw kit in Node);
// - Vite SPA (Getting started, "Going to production: Vite"): `tsc`, `vite build`, then the
//   production build under `vite preview` with the reference server (`npx preview-chat-server`)
//   behind its proxy;
// - Next.js (site/examples/next/): `next build` (which type-checks) with the rewrite to the
//   reference server, then `next start`;
// - React Router 7, framework mode (the page's titled blocks): `react-router typegen`, `tsc`,
//   `react-router build`, then `react-router-serve`, the server kit mounted in its `/rest` route.
//
// Each production build is then driven in Debian's Chromium: a streamed answer arrives (React
// Router: seen in parts before its end, through react-router-serve's compression) and is read back
// after a reload; with the reference server stopped, a Send shows an error and keeps the draft
// (Vite, Next). Every app's time is printed.
//
//   node scripts/docs-examples.mjs [--keep] [--only vite,next,react-router]
//   node scripts/docs-examples.mjs --work <dir>   (the folder a --keep run left: its install reused)
import { execFileSync, spawn } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, stripVTControlCharacters } from 'node:util'
import { chromium } from '@playwright/test'
import { freePort } from './free-port.mjs'
import { guideFiles } from './guide-files.mjs'
import { createViteTsconfig } from './lib/create-vite-tsconfig.mjs'
import { packTarballs } from './pack-tarballs.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const examples = join(root, 'site/examples')
const { values: options } = parseArgs({
  options: {
    keep: { type: 'boolean', default: false },
    work: { type: 'string' },
    only: { type: 'string', default: 'vite,next,react-router' },
  },
})
const only = new Set(options.only.split(','))
for (const name of only)
  if (!['vite', 'next', 'react-router'].includes(name))
    throw new Error(`--only ${name}: name vite, next or react-router (comma-separated)`)
const reuse = options.work !== undefined
const work = options.work ?? mkdtempSync(join(tmpdir(), 'preview-chat-docs-examples-'))
const bin = (command) => join(work, 'node_modules/.bin', command)
const started = Date.now()
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(0)} s`
const env = { ...process.env, CI: 'true', NEXT_TELEMETRY_DISABLED: '1' }

const run = (command, args, cwd, extra = {}) => {
  console.log(`$ ${command} ${args.join(' ')}`)
  execFileSync(command, args, { cwd, stdio: 'inherit', env: { ...env, ...extra } })
}

/** Writes `files` (`{ path in the app: text }`) into `dir`, making their folders. */
function write(dir, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
}
/** Copies site/examples files (`{ from: to in the app }`) into `dir`. */
function copy(dir, files) {
  for (const [from, to] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, to)), { recursive: true })
    copyFileSync(join(examples, from), join(dir, to))
  }
}
const json = (value) => `${JSON.stringify(value, null, 2)}\n`
/** The entries of `record` named in `names`. */
const pick = (record, names) => Object.fromEntries(names.map((name) => [name, record[name]]))
/** The install's package.json (read once the install is there). */
let manifest

/**
 * Starts a long-running binary of the install (run itself, not through npx, in its own process
 * group, so that stopping it stops what it started); resolves once its output matches `ready`.
 */
function start(command, args, { cwd, env: extra = {}, ready }) {
  const child = spawn(bin(command), args, {
    cwd,
    env: { ...env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  let stopping = false
  const ended = new Promise((resolve) => child.on('exit', resolve))
  const started = new Promise((resolve, reject) => {
    // A process that never says it is ready fails the check instead of holding it for good.
    const deadline = setTimeout(
      () => reject(new Error(`${command} ${args.join(' ')} did not start in 60 s:\n${output}`)),
      60_000,
    )
    const onData = (chunk) => {
      output = (output + chunk).slice(-8000)
      // Colours would split the words the pattern looks for (Vite's `Local` is bold, its `:` not).
      const match = ready.exec(stripVTControlCharacters(output))
      if (match) {
        clearTimeout(deadline)
        resolve(match)
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.on('exit', (code) => {
      clearTimeout(deadline)
      if (!stopping) console.log(`${command} exited (${code}); its last output:\n${output}`)
      reject(new Error(`${command} ${args.join(' ')} exited (${code})`))
    })
  })
  started.catch(() => {})
  return {
    started,
    stop: () => {
      if (!stopping && child.exitCode === null && child.signalCode === null) {
        stopping = true
        try {
          process.kill(-child.pid, 'SIGTERM')
        } catch {
          // Gone already.
        }
      }
      return ended
    },
  }
}

/** The reference server from the server tarball, on `port` (0: any). */
function referenceServer(port = 0) {
  const server = start('preview-chat-server', ['--port', String(port), '--delta-ms', '30'], {
    cwd: work,
    ready: /listening on (http:\/\/\S+)/,
  })
  return { ...server, url: () => server.started.then(([, url]) => url) }
}

/** Runs `check` with a Chromium page whose page errors fail it. */
async function inChromium(check) {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  try {
    const page = await browser.newPage()
    const errors = []
    page.on('pageerror', (error) => errors.push(error.message))
    await check(page)
    if (errors.length > 0) throw new Error(`page errors: ${errors.join('; ')}`)
  } finally {
    await browser.close()
  }
}

/** Sends `/long 12`: the streamed answer arrives, and a reload reads it back. */
async function streamAndReload(page) {
  await page.getByLabel('Message').fill('/long 12')
  await page.getByRole('button', { name: 'Send' }).click()
  await page.getByText(/delta 12\./).waitFor({ timeout: 30_000 })
  await page.reload()
  await page.getByText(/delta 12\./).waitFor({ timeout: 15_000 })
}

/** With the backend stopped: a Send shows the error on the screen and keeps the draft. */
async function errorOnScreen(page, backend) {
  await backend.stop()
  await page.getByLabel('Message').fill('Still there?')
  await page.getByRole('button', { name: 'Send' }).click()
  // The App's alert (a framework may have its own, e.g. Next's route announcer).
  const alert = page
    .getByRole('alert')
    .filter({ has: page.getByRole('button', { name: 'Dismiss' }) })
  await alert.waitFor({ timeout: 15_000 })
  console.log(`  with the server stopped, on the screen: "${(await alert.textContent())?.trim()}"`)
  const draft = await page.getByLabel('Message').inputValue()
  if (draft !== 'Still there?') throw new Error(`the draft was not kept: "${draft}"`)
}

/** The Testing guide and the Vite SPA, in `work/vite`. */
async function checkVite() {
  const app = join(work, 'vite')
  copy(app, {
    'getting-started/index.html': 'index.html',
    'getting-started/vite.config.ts': 'vite.config.ts',
    'getting-started/main.tsx': 'src/main.tsx',
    'getting-started/App.tsx': 'src/App.tsx',
    'getting-started/App.test.tsx': 'src/App.test.tsx',
    'testing/vitest.config.ts': 'vitest.config.ts',
  })
  write(app, {
    'package.json': json({ name: 'vite-app', private: true, type: 'module' }),
    'tsconfig.json': json(
      createViteTsconfig({
        include: ['src', 'vite.config.ts', 'vitest.config.ts'],
        types: ['vite/client'],
        skipLibCheck: true,
        noUnusedLocals: true,
      }),
    ),
  })
  run(bin('tsc'), ['--noEmit'], app)
  run(bin('vitest'), ['run'], app)
  run(bin('vite'), ['build'], app)
  const server = referenceServer()
  const port = await freePort()
  const preview = start('vite', ['preview', '--port', String(port), '--strictPort'], {
    cwd: app,
    env: { PREVIEW_CHAT_SERVER: await server.url() },
    ready: /Local:\s+(http:\/\/\S+)/,
  })
  try {
    await preview.started
    await inChromium(async (page) => {
      await page.goto(`http://localhost:${port}/`)
      await page.waitForURL(/\?thread=/)
      // The thread is in the URL: a reload reads it back (the entry's prefetch).
      await streamAndReload(page)
      await errorOnScreen(page, server)
    })
  } finally {
    await Promise.all([preview.stop(), server.stop()])
  }
}

/** The Next.js page's files (site/examples/next/, the App of Getting started), in `work/next`. */
async function checkNext() {
  const app = join(work, 'next')
  copy(app, {
    'next/next.config.ts': 'next.config.ts',
    'next/app/t/[threadId]/page.tsx': 'app/t/[threadId]/page.tsx',
    'next/app/Chat.tsx': 'app/Chat.tsx',
    'getting-started/App.tsx': 'app/App.tsx',
  })
  write(app, {
    'package.json': json({ name: 'next-app', private: true }),
    // create-next-app's (16, the empty app router template): its layout and tsconfig.
    'app/layout.tsx': [
      "import type { Metadata } from 'next'",
      '',
      "export const metadata: Metadata = { title: 'Create Next App' }",
      '',
      "export default function RootLayout({ children }: LayoutProps<'/'>) {",
      '  return (',
      '    <html lang="en">',
      '      <body>{children}</body>',
      '    </html>',
      '  )',
      '}',
      '',
    ].join('\n'),
    'tsconfig.json': json({
      compilerOptions: {
        target: 'ES2017',
        lib: ['dom', 'dom.iterable', 'esnext'],
        allowJs: true,
        skipLibCheck: true,
        strict: true,
        noEmit: true,
        esModuleInterop: true,
        module: 'esnext',
        moduleResolution: 'bundler',
        resolveJsonModule: true,
        isolatedModules: true,
        jsx: 'react-jsx',
        incremental: true,
        plugins: [{ name: 'next' }],
        paths: { '@/*': ['./*'] },
      },
      include: ['next-env.d.ts', '**/*.ts', '**/*.tsx', '.next/types/**/*.ts', '**/*.mts'],
      exclude: ['node_modules'],
    }),
  })
  // The rewrite is resolved at build time: the server's port is chosen before.
  const serverPort = await freePort()
  const serverUrl = `http://127.0.0.1:${serverPort}`
  run(bin('next'), ['build'], app, { PREVIEW_CHAT_SERVER: serverUrl })
  const server = referenceServer(serverPort)
  const port = await freePort()
  const next = start('next', ['start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: app,
    ready: /Ready in/,
  })
  try {
    await Promise.all([server.started, next.started])
    await inChromium(async (page) => {
      const threadId = crypto.randomUUID()
      await page.goto(`http://127.0.0.1:${port}/t/${threadId}?new`)
      // The id is the thread's: the page drops `?new`, so a reload reads it (Chat's prefetch).
      await page.waitForURL(`http://127.0.0.1:${port}/t/${threadId}`)
      await streamAndReload(page)
      await errorOnScreen(page, server)
    })
  } finally {
    await Promise.all([next.stop(), server.stop()])
  }
}

/** The React Router page's titled files (and the App of Getting started), in `work/react-router`. */
async function checkReactRouter() {
  const app = join(work, 'react-router')
  const guide = 'site/docs/guide/react-router.mdx'
  const files = guideFiles(readFileSync(join(root, guide), 'utf8'), {
    guide,
    required: [
      'app/routes.ts',
      'app/routes/rest.$.ts',
      'app/chat-backend.server.ts',
      'app/chat-clients.ts',
      'app/routes/t.$threadId.tsx',
      'app/routes/home.tsx',
    ],
  })
  write(app, files)
  copy(app, { 'getting-started/App.tsx': 'app/App.tsx' })
  // What create-react-router writes (its default template, without Tailwind).
  write(app, {
    // Its dependencies named as there: `react-router build` looks for @react-router/node in them.
    'package.json': json({
      name: 'react-router-app',
      private: true,
      type: 'module',
      dependencies: pick(manifest.dependencies, [
        '@react-router/node',
        '@react-router/serve',
        'isbot',
        'react',
        'react-dom',
        'react-router',
      ]),
      devDependencies: pick(manifest.devDependencies, ['@react-router/dev', 'typescript', 'vite']),
    }),
    'react-router.config.ts': [
      "import type { Config } from '@react-router/dev/config'",
      '',
      'export default { ssr: true } satisfies Config',
      '',
    ].join('\n'),
    'vite.config.ts': [
      "import { reactRouter } from '@react-router/dev/vite'",
      "import { defineConfig } from 'vite'",
      '',
      'export default defineConfig({ plugins: [reactRouter()] })',
      '',
    ].join('\n'),
    'app/root.tsx': [
      "import type { ReactNode } from 'react'",
      "import { Links, Meta, Outlet, Scripts, ScrollRestoration } from 'react-router'",
      '',
      'export function Layout({ children }: { children: ReactNode }) {',
      '  return (',
      '    <html lang="en">',
      '      <head>',
      '        <meta charSet="utf-8" />',
      '        <meta name="viewport" content="width=device-width, initial-scale=1" />',
      '        <Meta />',
      '        <Links />',
      '      </head>',
      '      <body>',
      '        {children}',
      '        <ScrollRestoration />',
      '        <Scripts />',
      '      </body>',
      '    </html>',
      '  )',
      '}',
      '',
      'export default function App() {',
      '  return <Outlet />',
      '}',
      '',
    ].join('\n'),
    'tsconfig.json': json({
      include: ['**/*', '**/.server/**/*', '**/.client/**/*', '.react-router/types/**/*'],
      compilerOptions: {
        lib: ['DOM', 'DOM.Iterable', 'ES2022'],
        types: ['node', 'vite/client'],
        target: 'ES2022',
        module: 'ES2022',
        moduleResolution: 'bundler',
        jsx: 'react-jsx',
        rootDirs: ['.', './.react-router/types'],
        esModuleInterop: true,
        verbatimModuleSyntax: true,
        noEmit: true,
        resolveJsonModule: true,
        skipLibCheck: true,
        strict: true,
      },
    }),
  })
  run(bin('react-router'), ['typegen'], app)
  run(bin('tsc'), ['--noEmit'], app)
  run(bin('react-router'), ['build'], app)
  const port = await freePort()
  const serve = start('react-router-serve', ['./build/server/index.js'], {
    cwd: app,
    env: { PORT: String(port), HOST: '127.0.0.1' },
    ready: /\[react-router-serve\] (http:\/\/\S+)/,
  })
  try {
    await serve.started
    await inChromium(async (page) => {
      await page.goto(`http://127.0.0.1:${port}/`)
      await page.getByRole('button', { name: 'New chat' }).click()
      // The page drops `?new` once the thread is its own: a reload reads it.
      await page.waitForURL(/\/t\/[\w-]+$/)
      await page.getByLabel('Message').fill('/long 150')
      await page.getByRole('button', { name: 'Send' }).click()
      // Streamed, not buffered by the production server: a part is on the screen before the end.
      await page.getByText(/delta 3\./).waitFor({ timeout: 30_000 })
      if (await page.getByText(/delta 150\./).isVisible())
        throw new Error('the answer came at once: react-router-serve held the stream back')
      // A reload mid-answer: the answer so far is read back (the clientLoader's prefetch) and
      // followed to its end (the SSE push through the same route).
      await page.reload()
      await page.getByText(/delta 3\./).waitFor({ timeout: 15_000 })
      await page.getByText(/delta 150\./).waitFor({ timeout: 30_000 })
      // Back home and forward again, in the page: a navigation, whose clientLoader starts the read.
      await page.goBack()
      await page.getByRole('button', { name: 'New chat' }).waitFor()
      await page.goForward()
      await page.getByText(/delta 150\./).waitFor({ timeout: 15_000 })
    })
  } finally {
    await serve.stop()
  }
}

try {
  const tarballsDir = join(work, 'tarballs')
  if (!reuse) {
    mkdirSync(tarballsDir, { recursive: true })
    const tarballs = packTarballs(root, ['core', 'react', 'server', 'msw'], tarballsDir)
    const pins = JSON.parse(readFileSync(join(root, 'examples/next-app/package.json'), 'utf8'))
    // One install for every app: what the guides' install lines name, what `npm create vite`
    // (react-ts), `create-next-app` and `create-react-router` bring.
    write(work, {
      'package.json': json({
        name: 'preview-chat-docs-examples',
        private: true,
        type: 'module',
        dependencies: {
          '@preview-chat/core': tarballs['@preview-chat/core'],
          '@preview-chat/react': tarballs['@preview-chat/react'],
          '@preview-chat/server': tarballs['@preview-chat/server'],
          '@react-router/node': '^7.18.0',
          '@react-router/serve': '^7.18.0',
          '@tanstack/query-core': '^5.80.0',
          '@tanstack/react-query': '^5.80.0',
          isbot: '^5.1.0',
          next: pins.dependencies.next,
          react: '^19.0.0',
          'react-dom': '^19.0.0',
          'react-router': '^7.18.0',
        },
        devDependencies: {
          '@preview-chat/msw': tarballs['@preview-chat/msw'],
          '@react-router/dev': '^7.18.0',
          '@testing-library/dom': '^10.4.0',
          '@testing-library/react': '^16.3.0',
          '@types/node': '^20.19.0',
          '@types/react': '^19.0.0',
          '@types/react-dom': '^19.0.0',
          '@vitejs/plugin-react': '^6.0.0',
          jsdom: '^26.1.0',
          msw: '^2.10.0',
          typescript: '~5.9.0',
          vite: '^8.0.0',
          vitest: '^4.1.0',
        },
      }),
    })
    const install = Date.now()
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], work)
    console.log(`docs examples: packed and installed in ${seconds(install)}`)
  } else if (!existsSync(join(work, 'node_modules'))) {
    throw new Error(`--work ${work}: no install there; name the folder a --keep run printed`)
  }
  manifest = JSON.parse(readFileSync(join(work, 'package.json'), 'utf8'))
  const apps = [
    ['vite', 'Testing guide and Vite SPA', checkVite],
    ['next', 'Next.js', checkNext],
    ['react-router', 'React Router 7', checkReactRouter],
  ]
  const times = []
  for (const [name, title, check] of apps) {
    if (!only.has(name)) continue
    rmSync(join(work, name), { recursive: true, force: true })
    const since = Date.now()
    await check()
    times.push(`${title} ${seconds(since)}`)
    console.log(
      `docs examples: ${title}: streamed through the production build (${seconds(since)})`,
    )
  }
  console.log(`docs examples: all pass in ${seconds(started)} (${times.join(', ')})`)
} finally {
  if (reuse || options.keep) console.log(`the work folder (--work): ${work}`)
  else rmSync(work, { recursive: true, force: true })
}
