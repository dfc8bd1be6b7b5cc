// `pnpm test:docs-examples`: the docs site's examples as a user has them. Packs the packages (each
// `prepack` builds), makes a fresh app outside the repository from the tarballs and the files the
// guides show (site/examples/, each page's files by the names the page gives them), and there:
//
// - Testing guide: `vitest run` of Getting started's App.test.tsx with the vitest.config.ts the
//   guide shows beside it (jsdom, the msw kit in Node);
// - Vite SPA (Getting started, "Going to production: Vite"): `tsc`, `vite build`, then the
//   production build under `vite preview` with the reference server (`npx preview-chat-server`)
//   behind its proxy, in Debian's Chromium: a streamed answer arrives, is read back after a
//   reload, and with the server stopped a Send shows an error and keeps the draft.
//
//   node scripts/docs-examples.mjs [--keep]   (--keep: leave the app in the temporary folder)
//   node scripts/docs-examples.mjs --app <dir>  (the app a --keep run left: its install reused)
import { execFileSync, spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { freePort } from './free-port.mjs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stripVTControlCharacters } from 'node:util'
import { chromium } from '@playwright/test'

const root = fileURLToPath(new URL('..', import.meta.url))
const examples = join(root, 'site/examples')
const packages = ['core', 'react', 'server', 'msw']
const reuse = process.argv.includes('--app')
  ? process.argv[process.argv.indexOf('--app') + 1]
  : undefined
const work = reuse ? join(reuse, '..') : mkdtempSync(join(tmpdir(), 'preview-chat-docs-examples-'))
const tarballs = join(work, 'tarballs')
const app = join(work, 'app')
mkdirSync(tarballs, { recursive: true })
mkdirSync(join(app, 'src'), { recursive: true })

const run = (command, args, cwd, env = {}) => {
  console.log(`$ ${command} ${args.join(' ')}`)
  execFileSync(command, args, {
    cwd,
    stdio: 'inherit',
    env: { ...process.env, CI: 'true', ...env },
  })
}

/**
 * Starts a long-running command of the app (a binary of its node_modules/.bin, run itself, not
 * through npx, so that stopping it stops it); resolves once its output matches `ready`.
 */
function start(command, args, { env = {}, ready }) {
  const child = spawn(join(app, 'node_modules/.bin', command), args, {
    cwd: app,
    env: { ...process.env, ...env },
  })
  let output = ''
  const started = new Promise((resolve, reject) => {
    // A process that never says it is ready fails the check instead of holding it for good.
    const deadline = setTimeout(
      () => reject(new Error(`${command} ${args.join(' ')} did not start in 60 s:\n${output}`)),
      60_000,
    )
    const onData = (chunk) => {
      output += chunk
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
      reject(new Error(`${command} ${args.join(' ')} exited (${code}):\n${output}`))
    })
  })
  const stopped = new Promise((resolve) => child.on('exit', resolve))
  return {
    started,
    stop: () => {
      child.kill('SIGTERM')
      return stopped
    },
  }
}

/** The Vite SPA's production build, served by `vite preview` against the reference server. */
async function checkViteSpa() {
  run('npx', ['vite', 'build'], app)
  const server = start('preview-chat-server', ['--port', '0', '--delta-ms', '30'], {
    ready: /listening on (http:\/\/\S+)/,
  })
  const [, serverUrl] = await server.started
  const port = await freePort()
  const preview = start('vite', ['preview', '--port', String(port), '--strictPort'], {
    env: { PREVIEW_CHAT_SERVER: serverUrl },
    ready: /Local:\s+(http:\/\/\S+)/,
  })
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  try {
    await preview.started
    const page = await browser.newPage()
    const errors = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`http://localhost:${port}/`)
    await page.waitForURL(/\?thread=/)
    await page.getByLabel('Message').fill('/long 12')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.getByText(/delta 12\./).waitFor({ timeout: 30_000 })
    // The thread is in the URL: a reload reads it back (the entry's prefetch).
    await page.reload()
    await page.getByText(/delta 12\./).waitFor({ timeout: 15_000 })
    // The server gone: the error reaches the screen, the draft is kept.
    await server.stop()
    await page.getByLabel('Message').fill('Still there?')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.getByRole('alert').waitFor({ timeout: 15_000 })
    const draft = await page.getByLabel('Message').inputValue()
    if (draft !== 'Still there?') throw new Error(`the draft was not kept: "${draft}"`)
    if (errors.length > 0) throw new Error(`page errors: ${errors.join('; ')}`)
    console.log('Vite SPA: streamed through the production build, read back, error shown')
  } finally {
    await browser.close()
    await Promise.all([preview.stop(), server.stop()])
  }
}

try {
  if (!reuse)
    for (const name of packages)
      run(
        'npx',
        ['-y', 'pnpm@10.34.9', 'pack', '--pack-destination', tarballs],
        join(root, 'packages', name),
      )
  const tarball = (name) => {
    const file = readdirSync(tarballs).find((f) => f.startsWith(`preview-chat-${name}-`))
    if (!file) throw new Error(`no tarball for @preview-chat/${name}`)
    return `file:${join(tarballs, file)}`
  }
  // What the guides' install lines name, and what `npm create vite` (react-ts) brings.
  const manifest = {
    name: 'preview-chat-docs-examples',
    private: true,
    type: 'module',
    dependencies: {
      '@preview-chat/core': tarball('core'),
      '@preview-chat/react': tarball('react'),
      '@tanstack/query-core': '^5.80.0',
      '@tanstack/react-query': '^5.80.0',
      react: '^19.0.0',
      'react-dom': '^19.0.0',
    },
    devDependencies: {
      '@preview-chat/msw': tarball('msw'),
      '@preview-chat/server': tarball('server'),
      '@testing-library/dom': '^10.4.0',
      '@testing-library/react': '^16.3.0',
      '@types/react': '^19.0.0',
      '@types/react-dom': '^19.0.0',
      '@vitejs/plugin-react': '^6.0.0',
      jsdom: '^26.1.0',
      msw: '^2.10.0',
      typescript: '~5.9.0',
      vite: '^8.0.0',
      vitest: '^4.1.0',
    },
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2))
  // create-vite's react-ts tsconfig, in one file.
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023', 'DOM', 'DOM.Iterable'],
          module: 'ESNext',
          moduleResolution: 'Bundler',
          jsx: 'react-jsx',
          strict: true,
          noUnusedLocals: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['vite/client'],
        },
        include: ['src', 'vite.config.ts', 'vitest.config.ts'],
      },
      null,
      2,
    ),
  )
  const files = {
    'getting-started/index.html': 'index.html',
    'getting-started/vite.config.ts': 'vite.config.ts',
    'getting-started/main.tsx': 'src/main.tsx',
    'getting-started/App.tsx': 'src/App.tsx',
    'getting-started/App.test.tsx': 'src/App.test.tsx',
    'testing/vitest.config.ts': 'vitest.config.ts',
  }
  for (const [from, to] of Object.entries(files)) copyFileSync(join(examples, from), join(app, to))

  if (!reuse) run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], app)
  run('npx', ['tsc', '--noEmit'], app)
  run('npx', ['vitest', 'run'], app)
  await checkViteSpa()
  console.log('docs examples: the testing guide passes and the Vite SPA serves a streamed answer')
} finally {
  if (reuse || process.argv.includes('--keep')) console.log(`the app: ${app}`)
  else rmSync(work, { recursive: true, force: true })
}
