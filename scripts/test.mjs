// `pnpm test`: everything CI checks, as a list of named steps run in order, the quick ones that
// fail most often first. The packages are built once (step `build`, `pnpm build:packages`); every
// later step that needs them (publint and attw, the API reports, the packed tarballs, the Next
// app) uses that build: nothing runs `prepack` again. The example apps, the docs site and
// Storybook are built once, side by side (step `app builds`), for the e2e and the stories. Stops at
// the first failing step; at the end, or at that failure, prints each step's time.
//
// Adding a step is one line in `steps` below: `[name, command]` (a shell command, run at the
// repository's root), or `[name, [command, command, …]]` for commands that run side by side (the
// step fails when any does; their output is printed one command at a time, when each ends).
//
//   node scripts/test.mjs               every step
//   node scripts/test.mjs --list        the steps, without running them
//   node scripts/test.mjs --from e2e    from that step on (names as in --list)
//   node scripts/test.mjs --only lint,unit
//   node scripts/test.mjs --keep-going   every step even after a failure (exits with the first failure's code)
import { spawn } from 'node:child_process'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** What the e2e and the stories run on, built side by side (each reads the packages' sources but
 * the Next app, which takes the one build of step `build`). */
const appBuilds = [
  'node scripts/ensure-chromium.mjs && tsc --noEmit -p e2e',
  'pnpm --filter @preview-chat/example-chat-app build',
  'pnpm --filter @preview-chat/example-assistant-ui build',
  'pnpm --filter @preview-chat/example-next-app build:e2e:app',
  'pnpm --filter @preview-chat/example-own-backend build',
  'pnpm docs:build',
  'pnpm build-storybook',
]

/** @type {[name: string, command: string | string[]][]} */
const steps = [
  ['rules', 'pnpm check:rules'],
  ['changesets', 'pnpm check:changesets'],
  ['lint', 'pnpm lint'],
  ['typecheck', 'pnpm typecheck'],
  ['size', 'pnpm check:size'],
  ['unit', 'pnpm test:unit'],
  ['bench smoke', 'pnpm bench --smoke'],
  ['build', 'pnpm build:packages'],
  ['packages', 'pnpm check:packages:built'],
  ['api', 'pnpm check:api'],
  ['consumer', 'node scripts/consumer-smoke.mjs'],
  ['consumer kit', 'node scripts/consumer-kit.mjs'],
  ['docs examples', 'node scripts/docs-examples.mjs'],
  ['app builds', appBuilds],
  ['e2e', 'pnpm e2e:run'],
  ['stories', 'pnpm stories:run'],
]

const root = fileURLToPath(new URL('..', import.meta.url))

/** Runs `command` in a shell at the root; `quiet` collects its output instead of printing it. */
function run(command, quiet) {
  return new Promise((resolve) => {
    const child = spawn(command, {
      cwd: root,
      // As `pnpm test` runs them: the workspace's tools (tsc, vitest, playwright) on the PATH.
      env: {
        ...process.env,
        PATH: `${join(root, 'node_modules/.bin')}${delimiter}${process.env.PATH}`,
      },
      shell: true,
      stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    })
    let output = ''
    child.stdout?.on('data', (chunk) => (output += chunk))
    child.stderr?.on('data', (chunk) => (output += chunk))
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }))
  })
}

async function runStep(command) {
  if (typeof command === 'string') return (await run(command, false)).code
  const codes = await Promise.all(
    command.map(async (one) => {
      const started = performance.now()
      const { code, output } = await run(one, true)
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      console.log(`\n── ${one} (${seconds} s, ${code === 0 ? 'ok' : `exit ${code}`})\n${output}`)
      return code
    }),
  )
  return codes.find((code) => code !== 0) ?? 0
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`

function summary(results, total) {
  const width = Math.max(...results.map(({ name }) => name.length))
  console.log('\npnpm test, step by step:')
  for (const { name, ms, code } of results)
    console.log(
      `  ${name.padEnd(width)}  ${seconds(ms).padStart(8)}  ${code === 0 ? 'ok' : `FAILED (exit ${code})`}`,
    )
  console.log(`  ${'total'.padEnd(width)}  ${seconds(total).padStart(8)}`)
}

async function main(args) {
  const option = (flag) => {
    const at = args.indexOf(flag)
    return at === -1 ? undefined : args[at + 1]
  }
  const names = steps.map(([name]) => name)
  if (args.includes('--list')) {
    for (const [name, command] of steps) console.log(`${name}: ${[command].flat().join('  |  ')}`)
    return 0
  }
  const only = option('--only')?.split(',')
  const from = option('--from')
  for (const name of [...(only ?? []), ...(from ? [from] : [])])
    if (!names.includes(name)) {
      console.error(`no step "${name}"; the steps: ${names.join(', ')}`)
      return 2
    }
  const chosen = steps.filter(
    ([name]) =>
      (!only || only.includes(name)) && (!from || names.indexOf(name) >= names.indexOf(from)),
  )
  const keepGoing = args.includes('--keep-going')
  const results = []
  const started = performance.now()
  for (const [name, command] of chosen) {
    console.log(`\n▶ ${name}: ${[command].flat().join('  |  ')}`)
    const stepStarted = performance.now()
    const code = await runStep(command)
    results.push({ name, ms: performance.now() - stepStarted, code })
    console.log(`◀ ${name}: ${seconds(results.at(-1).ms)}, ${code === 0 ? 'ok' : `exit ${code}`}`)
    if (code !== 0 && !keepGoing) {
      summary(results, performance.now() - started)
      console.log(`\nStep "${name}" failed; rerun from it: node scripts/test.mjs --from "${name}"`)
      return code
    }
  }
  summary(results, performance.now() - started)
  return results.find(({ code }) => code !== 0)?.code ?? 0
}

process.exitCode = await main(process.argv.slice(2))
