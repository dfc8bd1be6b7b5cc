// `pnpm test:consumer`: the setup a user has, not the workspace's. Packs the five packages (each
// `prepack` builds), checks that each tarball holds what it should and nothing else
// (tarball-contents.mjs), installs the tarballs with npm into a fresh app outside the repository,
// and there type-checks and runs the MSW component test of @preview-chat/msw's README, verbatim,
// and type-checks the complete page of @preview-chat/assistant-ui's README beside
// @assistant-ui/react.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkTarball } from './tarball-contents.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const packages = ['core', 'react', 'server', 'msw', 'assistant-ui']
const work = mkdtempSync(join(tmpdir(), 'preview-chat-consumer-'))
const tarballs = join(work, 'tarballs')
const app = join(work, 'app')
mkdirSync(tarballs)
mkdirSync(join(app, 'src'), { recursive: true })

const run = (command, args, cwd) => {
  console.log(`$ ${command} ${args.join(' ')}`)
  execFileSync(command, args, { cwd, stdio: 'inherit', env: { ...process.env, CI: 'true' } })
}

try {
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
  const wrong = []
  for (const name of packages) {
    const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'))
    const { files, problems } = checkTarball(tarball(name).slice('file:'.length), manifest)
    console.log(`${manifest.name}: ${files.length} files, ${problems.length} wrong`)
    wrong.push(...problems.map((problem) => `${manifest.name}: ${problem}`))
  }
  if (wrong.length > 0)
    throw new Error(
      `the tarballs do not hold what they should:\n  ${wrong.join('\n  ')}\nMend \`files\` in that package.json (or the build), or the rules in scripts/tarball-contents.mjs when the change is meant.`,
    )

  // What a user's app declares: our packages, their peers, and the test tools of the msw README.
  const manifest = {
    name: 'preview-chat-consumer',
    private: true,
    type: 'module',
    dependencies: {
      '@preview-chat/core': tarball('core'),
      '@preview-chat/react': tarball('react'),
      '@preview-chat/assistant-ui': tarball('assistant-ui'),
      '@assistant-ui/react': '^0.15.22',
      '@tanstack/query-core': '^5.80.0',
      '@tanstack/react-query': '^5.80.0',
      react: '^19.0.0',
      'react-dom': '^19.0.0',
    },
    devDependencies: {
      '@preview-chat/msw': tarball('msw'),
      '@preview-chat/server': tarball('server'),
      '@testing-library/dom': '^10.4.0',
      '@types/node': '^20.19.0',
      '@testing-library/react': '^16.3.0',
      '@types/react': '^19.0.0',
      '@types/react-dom': '^19.0.0',
      jsdom: '^26.1.0',
      msw: '^2.10.0',
      typescript: '~5.9.0',
      vitest: '^4.1.0',
    },
    scripts: { typecheck: 'tsc --noEmit', test: 'vitest run' },
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2))
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
          skipLibCheck: false,
          noEmit: true,
          types: [],
        },
        include: ['src'],
      },
      null,
      2,
    ),
  )
  // The environment the msw README asks for.
  writeFileSync(
    join(app, 'vitest.config.ts'),
    "import { defineConfig } from 'vitest/config'\n\nexport default defineConfig({ test: { environment: 'jsdom' } })\n",
  )
  const readme = readFileSync(join(root, 'packages/msw/README.md'), 'utf8')
  const example = readme.match(/<!-- example: react -->\n+```tsx\n([\s\S]*?)\n```/)?.[1]
  if (!example) throw new Error('the React example of the msw README is missing')
  // The README's test, and once more under another name: the second renders afresh only if the
  // first test's components were cleaned up (without Vitest globals, setupPreviewChatServer does it).
  const test = example.slice(example.indexOf('\nit('))
  const again = test.replace(/\nit\('[^']*'/, "\nit('renders afresh in a second test'")
  writeFileSync(join(app, 'src/chat.test.tsx'), `${example}\n${again}\n`)

  // The assistant-ui README's page, verbatim: type-checked only (it talks to a server). On its own,
  // with Node's types: the d.ts of radix-ui, which @assistant-ui/react depends on, names
  // `setImmediate`.
  const auiReadme = readFileSync(join(root, 'packages/assistant-ui/README.md'), 'utf8')
  const page = auiReadme.match(/<!-- example: page -->\n+```tsx\n([\s\S]*?)\n```/)?.[1]
  if (!page) throw new Error('the complete page of the assistant-ui README is missing')
  mkdirSync(join(app, 'assistant-ui'))
  writeFileSync(join(app, 'assistant-ui/page.tsx'), `${page}\n`)
  writeFileSync(
    join(app, 'tsconfig.assistant-ui.json'),
    JSON.stringify(
      {
        extends: './tsconfig.json',
        compilerOptions: { types: ['node'] },
        include: ['assistant-ui'],
      },
      null,
      2,
    ),
  )

  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], app)
  run('npx', ['tsc', '--noEmit'], app)
  run('npx', ['tsc', '--noEmit', '-p', 'tsconfig.assistant-ui.json'], app)
  run('npx', ['vitest', 'run'], app)
  console.log(
    'consumer smoke: the packed packages install, type-check and pass the README test; the assistant-ui page type-checks',
  )
} finally {
  rmSync(work, { recursive: true, force: true })
}
