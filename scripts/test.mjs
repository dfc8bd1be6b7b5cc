// `pnpm test`: everything CI checks, as a list of named steps, the quick ones that fail most often
// first, run in stages: a step marked `beside` runs side by side with the one before it. The
// packages are built once (step `build`, `pnpm build:packages`); every later step that needs them
// (publint and attw, the API reports, the packed tarballs, the Next app) uses that build: nothing
// runs `prepack` again. The example apps, the docs site and Storybook are built once, side by side
// (step `app builds`), for the e2e and the stories. Stops after the stage of the first failing
// step; at the end, or at that failure, prints each step's wall time, CPU time (the machine's
// while it ran, and its own processes') and cores busy.
//
// Adding a step is one line in `steps` below: `[name, command]` (a shell command, run at the
// repository's root), or `[name, [command, command, …]]` for commands that run side by side (the
// step fails when any does; their output is printed one command at a time, when each ends); add
// `'beside'` to run it beside the step above it.
//
//   node scripts/test.mjs               every step
//   node scripts/test.mjs --list        the steps, without running them
//   node scripts/test.mjs --from e2e    from that step on (names as in --list)
//   node scripts/test.mjs --only lint,unit
//   node scripts/test.mjs --keep-going   every step even after a failure (exits with the first failure's code)
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
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

/**
 * The steps in order. A step marked `beside` runs side by side with the step before it (a stage).
 * None is marked today: on this 2-core machine every stage tried was slower than its steps one
 * after another (a clean clone, nothing else running, 2026-12-06): lint | typecheck | size 138 s
 * against 87 s in a row; packages | api | bench smoke | app builds 153 s against 84 s; unit |
 * consumer | consumer kit | docs examples 680 s against 422 s (the unit step alone 296 s; beside
 * the installs it lost the cores, and a test that streams 100,000 deltas timed out). Nor the e2e
 * beside bench smoke, consumer, consumer kit, docs examples and stories, one after another in a
 * second process (2026-12-07): 759 s against 804 s in a row, the e2e 662 s instead of 500 s and the
 * consumer step 289 s instead of 65 s. The e2e looked as if it waited (its own CPU 305 s in 516 s)
 * but kept the machine busy for 952 s of CPU: the browsers' processes are missed by its own CPU
 * (see `machineBusy`). The steps wait less than they compute: the summary's machine column shows
 * it. Mark a step only with a before-and-after of the whole chain. What a stage needs was made by
 * the stages before it: `build` writes the packages' dist/ before anything packs or reads it, and
 * no stage writes files another step of its stage reads (the app builds are not beside lint or
 * typecheck, which read the apps' sources; next-app's typecheck and build both write its readme
 * page).
 * @type {[name: string, command: string | string[], beside?: 'beside'][]}
 */
const steps = [
  ['rules', 'pnpm check:rules'],
  ['changesets', 'pnpm check:changesets'],
  ['lint', 'pnpm lint'],
  ['typecheck', 'pnpm typecheck'],
  ['size', 'pnpm check:size'],
  ['build', 'pnpm build:packages'],
  ['packages', 'pnpm check:packages:built'],
  ['api', 'pnpm check:api'],
  ['bench smoke', 'pnpm bench --smoke'],
  ['app builds', appBuilds],
  ['unit', 'pnpm test:unit'],
  ['consumer', 'node scripts/consumer-smoke.mjs'],
  ['consumer kit', 'node scripts/consumer-kit.mjs'],
  ['docs examples', 'node scripts/docs-examples.mjs'],
  ['e2e', 'pnpm e2e:run'],
  ['stories', 'pnpm stories:run'],
]

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * Runs `command` in a shell at the root; `quiet` collects its output instead of printing it.
 * Answers its exit code, its output (when quiet) and the CPU time (user + system, seconds) of the
 * shell and every process it waited for, read with the shell's `times` on a pipe of its own (fd 3,
 * closed for the command itself). A daemon the command leaves running is not counted.
 */
function run(command, quiet) {
  return new Promise((resolve) => {
    const child = spawn(
      '/bin/sh',
      ['-c', 'eval "$1" 3>&-; status=$?; times >&3; exit $status', 'sh', command],
      {
        cwd: root,
        // As `pnpm test` runs them: the workspace's tools (tsc, vitest, playwright) on the PATH.
        env: {
          ...process.env,
          PATH: `${join(root, 'node_modules/.bin')}${delimiter}${process.env.PATH}`,
        },
        stdio: [
          quiet ? 'ignore' : 'inherit',
          quiet ? 'pipe' : 'inherit',
          quiet ? 'pipe' : 'inherit',
          'pipe',
        ],
      },
    )
    let output = ''
    let times = ''
    child.stdout?.on('data', (chunk) => (output += chunk))
    child.stderr?.on('data', (chunk) => (output += chunk))
    child.stdio[3].on('data', (chunk) => (times += chunk))
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), output, cpu: cpuSeconds(times) }),
    )
  })
}

/**
 * The CPU time (seconds) the whole machine has spent busy since it booted, every process's: the
 * first line of Linux's /proc/stat, in clock ticks (USER_HZ, 100 on Linux), idle and iowait left
 * out. `undefined` where there is no /proc/stat (macOS). A step's own CPU (its processes' `times`)
 * counts only processes that an ancestor within the step waited for; one that outlives its parent
 * is adopted outside the step and counted nowhere. The browsers' processes are missed so: the
 * e2e's own CPU read 305 s where the machine was busy for 952 s of a 516 s run, Storybook's stories
 * 34 s against 68 s (2026-12-07, nothing else running).
 */
function machineBusy() {
  let stat
  try {
    stat = readFileSync('/proc/stat', 'utf8')
  } catch {
    return undefined
  }
  const [user, nice, system, , , irq, softirq, steal] = stat
    .slice(0, stat.indexOf('\n'))
    .split(/\s+/)
    .slice(1)
    .map(Number)
  const ticks = user + nice + system + irq + softirq + (steal || 0)
  return Number.isFinite(ticks) ? ticks / 100 : undefined
}

/** The sum of the four times (`0m1.230000s`) that a shell's `times` prints. */
function cpuSeconds(times) {
  let sum = 0
  for (const [, minutes, secs] of times.matchAll(/(\d+)m([\d.]+)s/g))
    sum += Number(minutes) * 60 + Number(secs)
  return sum
}

/**
 * Runs a step's command, or its commands side by side; `alone` (a step without others beside it,
 * with one command) prints its output as it comes, else each command's output is printed when it
 * ends. Answers the first failing code and the CPU time.
 */
async function runStep(name, command, alone) {
  if (alone && typeof command === 'string') {
    const { code, cpu } = await run(command, false)
    return { code, cpu }
  }
  const results = await Promise.all(
    [command].flat().map(async (one) => {
      const started = performance.now()
      const { code, output, cpu } = await run(one, true)
      const wall = (performance.now() - started) / 1000
      console.log(
        `\n── ${name}: ${one} (${wall.toFixed(1)} s, CPU ${cpu.toFixed(1)} s, ${code === 0 ? 'ok' : `exit ${code}`})\n${output}`,
      )
      return { code, cpu }
    }),
  )
  return {
    code: results.find(({ code }) => code !== 0)?.code ?? 0,
    cpu: results.reduce((sum, { cpu }) => sum + cpu, 0),
  }
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`

/**
 * Each step's wall time; the CPU the machine spent while it ran (every process's: a step that runs
 * alone is all the machine does in CI) and its own CPU (user + system of every process it waited
 * for, which misses those that outlive their parent); and how many of the cores were busy on
 * average (machine CPU / wall). Where the machine's figure cannot be read, its own stands in. Steps
 * side by side share the machine's figure of their time (marked `*`).
 */
function summary(results, total, machineTotal) {
  const width = Math.max('total'.length, ...results.map(({ name }) => name.length))
  console.log(
    "\npnpm test, step by step (wall; CPU of the machine, and of the step's own processes; cores busy):",
  )
  const cpuCell = (cpu) => (cpu === undefined ? '—' : `${cpu.toFixed(1)} s`).padStart(8)
  const line = (name, ms, machine, own, status) =>
    console.log(
      `  ${name.padEnd(width)}  ${seconds(ms).padStart(8)}  ${cpuCell(machine)}  ${cpuCell(own)}  ${((machine ?? own) / Math.max(ms / 1000, 0.001)).toFixed(2).padStart(5)}  ${status}`,
    )
  console.log(
    `  ${''.padEnd(width)}  ${'wall'.padStart(8)}  ${'machine'.padStart(8)}  ${'own'.padStart(8)}  ${'cores'.padStart(5)}`,
  )
  for (const { name, ms, machine, cpu, code, shared } of results)
    line(
      name,
      ms,
      machine,
      cpu,
      `${code === 0 ? 'ok' : `FAILED (exit ${code})`}${shared ? ' *' : ''}`,
    )
  line(
    'total',
    total,
    machineTotal,
    results.reduce((sum, { cpu }) => sum + cpu, 0),
    '',
  )
  if (results.some(({ shared }) => shared))
    console.log("  * ran side by side with another step: the machine's CPU of that time is both's")
}

async function main(args) {
  const option = (flag) => {
    const at = args.indexOf(flag)
    return at === -1 ? undefined : args[at + 1]
  }
  const names = steps.map(([name]) => name)
  if (args.includes('--list')) {
    for (const [name, command, beside] of steps)
      console.log(`${beside ? '  beside: ' : ''}${name}: ${[command].flat().join('  |  ')}`)
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
  // The chosen steps in stages: a `beside` step runs with the steps of its stage that are chosen.
  let stageOf = 0
  const stageIds = new Map(steps.map(([name, , beside]) => [name, beside ? stageOf : ++stageOf]))
  /** @type {(typeof steps)[]} */
  const stages = []
  for (const step of chosen) {
    const last = stages.at(-1)
    if (last && stageIds.get(last[0][0]) === stageIds.get(step[0])) last.push(step)
    else stages.push([step])
  }
  const keepGoing = args.includes('--keep-going')
  const results = []
  const started = performance.now()
  const busyAtStart = machineBusy()
  const machineTotal = () => {
    const now = machineBusy()
    return busyAtStart === undefined || now === undefined ? undefined : now - busyAtStart
  }
  for (const stage of stages) {
    for (const [name, command] of stage)
      console.log(`\n▶ ${name}: ${[command].flat().join('  |  ')}`)
    if (stage.length > 1) console.log(`  (${stage.map(([name]) => name).join(', ')} side by side)`)
    const ended = await Promise.all(
      stage.map(async ([name, command]) => {
        const stepStarted = performance.now()
        const busyBefore = machineBusy()
        const { code, cpu } = await runStep(name, command, stage.length === 1)
        const busyAfter = machineBusy()
        const machine =
          busyBefore === undefined || busyAfter === undefined ? undefined : busyAfter - busyBefore
        const shared = stage.length > 1
        const result = { name, ms: performance.now() - stepStarted, machine, cpu, code, shared }
        console.log(
          `◀ ${name}: ${seconds(result.ms)}, CPU ${machine === undefined ? '' : `${machine.toFixed(1)} s (the machine), `}${cpu.toFixed(1)} s (its own), ${code === 0 ? 'ok' : `exit ${code}`}`,
        )
        return result
      }),
    )
    results.push(...ended)
    const failed = ended.find(({ code }) => code !== 0)
    if (failed && !keepGoing) {
      summary(results, performance.now() - started, machineTotal())
      console.log(
        `\nStep "${failed.name}" failed; rerun from it: node scripts/test.mjs --from "${failed.name}"`,
      )
      return failed.code
    }
  }
  summary(results, performance.now() - started, machineTotal())
  return results.find(({ code }) => code !== 0)?.code ?? 0
}

process.exitCode = await main(process.argv.slice(2))
