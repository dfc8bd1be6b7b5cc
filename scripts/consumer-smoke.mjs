// `pnpm test:consumer`: the setup a user has, not the workspace's. Packs the five packages from
// the build in their dist/ (`pnpm build` first; `prepack` is not run, so the packages are built
// once per `pnpm test`), checks that each tarball's dist is that build, byte for byte, and that
// each tarball holds what it should and nothing else (tarball-contents.mjs), installs the tarballs with npm into a fresh app outside the repository,
// and there type-checks and runs the MSW component test of @preview-chat/msw's README, verbatim,
// and type-checks the complete page of @preview-chat/assistant-ui's README beside
// @assistant-ui/react.
import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createViteTsconfig } from './lib/create-vite-tsconfig.mjs'
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

const filesIn = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true }).filter((file) => statSync(join(dir, file)).isFile())
    : []
/** Each file of `dir` with the time it was last written. */
const writtenAt = (dir) =>
  new Map(filesIn(dir).map((file) => [file, statSync(join(dir, file)).mtimeMs]))

/**
 * What differs between the dist/ of `tarball` and the workspace's `dist`, `before` packing (none:
 * the tarball holds that build, and packing wrote nothing there, so no `prepack` built again).
 */
function distDifferences(tarball, dist, before) {
  const unpacked = join(work, 'unpacked')
  rmSync(unpacked, { recursive: true, force: true })
  mkdirSync(unpacked)
  execFileSync('tar', ['-xzf', tarball, '-C', unpacked])
  const packed = join(unpacked, 'package/dist')
  const differences = []
  const after = writtenAt(dist)
  for (const [file, time] of before)
    if (after.get(file) !== time) differences.push(`dist/${file} was written while packing`)
  for (const file of new Set([...filesIn(dist), ...filesIn(packed)])) {
    const [ours, theirs] = [join(dist, file), join(packed, file)]
    if (!existsSync(theirs)) differences.push(`dist/${file} is not in the tarball`)
    else if (!existsSync(ours)) differences.push(`dist/${file} is in the tarball, not in dist/`)
    else if (!readFileSync(ours).equals(readFileSync(theirs)))
      differences.push(`dist/${file} differs`)
  }
  return differences
}

const built = new Map(
  packages.map((name) => [name, writtenAt(join(root, 'packages', name, 'dist'))]),
)

try {
  for (const name of packages) {
    if (!existsSync(join(root, 'packages', name, 'dist')))
      throw new Error(`packages/${name}/dist is missing: run \`pnpm build\` first`)
    run(
      'pnpm',
      ['pack', '--config.ignore-scripts=true', '--pack-destination', tarballs],
      join(root, 'packages', name),
    )
  }
  const tarball = (name) => {
    const file = readdirSync(tarballs).find((f) => f.startsWith(`preview-chat-${name}-`))
    if (!file) throw new Error(`no tarball for @preview-chat/${name}`)
    return `file:${join(tarballs, file)}`
  }
  const wrong = []
  for (const name of packages) {
    const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'))
    const file = tarball(name).slice('file:'.length)
    const { files, problems } = checkTarball(file, manifest)
    const differences = distDifferences(file, join(root, 'packages', name, 'dist'), built.get(name))
    console.log(
      `${manifest.name}: ${files.length} files, ${problems.length} wrong; its dist ${differences.length === 0 ? 'is the build in dist/, byte for byte' : 'is not the build in dist/'}`,
    )
    wrong.push(...[...problems, ...differences].map((problem) => `${manifest.name}: ${problem}`))
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
  // The packages' own d.ts are type-checked too (no skipLibCheck).
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify(
      createViteTsconfig({ include: ['src'], types: [], skipLibCheck: false }),
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
