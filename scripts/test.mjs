// `pnpm test`: everything CI checks, as a list of named steps, the quick ones that fail most often
// first, two at a time where what they read allows (each step names the steps it needs: see
// `steps`). The packages are built once (step `build`, `pnpm build:packages`); every later step
// that needs them (publint and attw, the API reports, the packed tarballs, the Next app) uses that
// build: nothing runs `prepack` again. The example apps, the docs site and Storybook are built
// once, side by side (step `app builds`), for the e2e and the stories. After the first failing
// step no other starts (those running end as they would); at the end prints each step's start,
// wall time, CPU time (the machine's while it ran, and its own processes') and cores busy. While
// two steps run, each line they print is led by the step's name.
//
// Adding a step is one line in `steps` below: `[name, command, needs]` (a shell command, run at the
// repository's root; `needs`, the steps it must come after), or `[name, [command, command, …],
// needs]` for commands that run side by side (the step fails when any does; their output is
// printed one command at a time, when each ends).
//
//   node scripts/test.mjs               every step
//   node scripts/test.mjs --list        the steps and their needs, without running them
//   node scripts/test.mjs --from e2e    the steps from that one of the list on (names as in
//                                       --list), on the builds already there
//   node scripts/test.mjs --only lint,unit
//   node scripts/test.mjs --jobs 1      one step at a time, in the list's order
//   node scripts/test.mjs --keep-going  every step even after a failure (exits with the first
//                                       failure's code)
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { reportOf, stepsFile } from './lib/closing-line.mjs'
import { checkNeeds, stepsToStart } from './lib/schedule.mjs'

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
 * The steps, in priority order, each with the steps it needs (`scripts/lib/schedule.mjs`): two run
 * at a time (`--jobs`), a free slot going to the first step whose needs have passed. The needs say
 * what a step reads that another writes, or must not share with it: `build` writes the packages'
 * dist/ before anything packs them; the app builds come after lint and typecheck, which read the
 * apps' sources and files the builds write (next-app's typecheck and build both write its readme
 * page, the docs build writes site/generated/); the e2e and the stories run on those builds. The
 * unit tests and the size check read the sources only (the packages through the
 * `@preview-chat/source` condition, the scripts' tests planted repositories of their own), and
 * every server that they, the e2e and the consumer steps start listens on a port of its own: they
 * can run beside anything.
 *
 * The order puts the critical path first: lint, typecheck, build, the app builds and the e2e, one
 * after another, with the unit tests and then the checks of the build beside them. One at a time
 * (`--jobs 1`), the steps left a core of this 2-core machine idle for 590 s of a 966 s run (the
 * unit tests kept 1.25 cores busy, the e2e 1.43, the consumer steps 1.01–1.14); the figures of two
 * at a time are in CONTRIBUTING, "The test command".
 * @type {[name: string, command: string | string[], needs?: string[]][]}
 */
const steps = [
  ['rules', 'pnpm check:rules'],
  ['changesets', 'pnpm check:changesets'],
  ['lint', 'pnpm lint'],
  ['typecheck', 'pnpm typecheck'],
  ['build', 'pnpm build:packages'],
  ['app builds', appBuilds, ['lint', 'typecheck', 'build']],
  ['e2e', 'pnpm e2e:run', ['build', 'app builds']],
  ['unit', 'pnpm test:unit'],
  ['size', 'pnpm check:size'],
  ['packages', 'pnpm check:packages:built', ['build']],
  ['api', 'pnpm check:api', ['build']],
  ['bench smoke', 'pnpm bench --smoke'],
  ['consumer', 'node scripts/consumer-smoke.mjs', ['build']],
  ['consumer kit', 'node scripts/consumer-kit.mjs', ['build']],
  ['docs examples', 'node scripts/docs-examples.mjs', ['build']],
  ['stories', 'pnpm stories:run', ['app builds']],
]

const root = fileURLToPath(new URL('..', import.meta.url))

/** The process groups of the commands running now, to stop on an interrupt (Ctrl-C). */
const groups = new Set()

/**
 * Ends a process group with SIGTERM: vitest, Playwright and the servers they start close what they
 * opened on it (a browser, Postgres).
 */
function stopGroup(pid) {
  try {
    process.kill(-pid, 'SIGTERM')
  } catch {
    // Gone already.
  }
}

/**
 * Runs `command` in a shell at the root. `output`: `'inherit'` prints as it comes (a step that
 * runs alone), a function takes each line as it comes, `'collect'` answers it all at the end.
 * Answers its exit code, its output (when collected) and the CPU time (user + system, seconds) of
 * the shell and every process it waited for, read with the shell's `times` on a pipe of its own
 * (fd 3, closed for the command itself). A daemon the command leaves running is not counted.
 */
function run(command, output) {
  return new Promise((resolve) => {
    const inherit = output === 'inherit'
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
          inherit ? 'inherit' : 'ignore',
          inherit ? 'inherit' : 'pipe',
          inherit ? 'inherit' : 'pipe',
          'pipe',
        ],
        // A group of its own (its output is ours to print, so the terminal's Ctrl-C reaches it
        // through `interrupt`, which stops the group whole). One that prints to the terminal stays
        // in ours, where Ctrl-C reaches it.
        detached: !inherit,
      },
    )
    if (!inherit) groups.add(child.pid)
    let collected = ''
    let partial = ''
    const take = (chunk) => {
      if (typeof output !== 'function') return void (collected += chunk)
      const lines = (partial + chunk).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) output(line)
    }
    let times = ''
    child.stdout?.on('data', take)
    child.stderr?.on('data', take)
    child.stdio[3].on('data', (chunk) => (times += chunk))
    child.on('close', (code, signal) => {
      groups.delete(child.pid)
      if (typeof output === 'function' && partial) output(partial)
      resolve({ code: code ?? (signal ? 1 : 0), output: collected, cpu: cpuSeconds(times) })
    })
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
 * Runs a step's command, or its commands side by side. `print`: undefined when the step can be all
 * that runs (one command prints as it comes), else what takes each line. A step of several
 * commands prints each command's output when it ends. Answers the first failing code and the CPU.
 */
async function runStep(name, command, print) {
  if (typeof command === 'string') {
    const { code, cpu } = await run(command, print ?? 'inherit')
    return { code, cpu }
  }
  const say = print ?? ((line) => console.log(line))
  const results = await Promise.all(
    command.map(async (one) => {
      const begun = performance.now()
      const { code, output, cpu } = await run(one, 'collect')
      const wall = (performance.now() - begun) / 1000
      say('')
      say(
        `── ${name}: ${one} (${wall.toFixed(1)} s, CPU ${cpu.toFixed(1)} s, ${code === 0 ? 'ok' : `exit ${code}`})`,
      )
      for (const line of output.replace(/\n$/, '').split('\n')) say(line)
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
 * Each step's start (from the run's), wall time, the CPU the machine spent while it ran (every
 * process's) and its own CPU (user + system of every process it waited for, which misses those
 * that outlive their parent), and how many of the cores were busy on average (machine CPU / wall).
 * Where the machine's figure cannot be read, its own stands in. A step that shared some of its
 * time with another is marked `*`: the machine's CPU of that time is both's.
 */
function summary(results, total, machineTotal, jobs) {
  const width = Math.max('total'.length, ...results.map(({ name }) => name.length))
  console.log(
    `\npnpm test, step by step, ${jobs} at a time (start; wall; CPU of the machine, and of the step's own processes; cores busy):`,
  )
  const cpuCell = (cpu) => (cpu === undefined ? '—' : `${cpu.toFixed(1)} s`).padStart(8)
  const line = (name, from, ms, machine, own, status) =>
    console.log(
      `  ${name.padEnd(width)}  ${from === undefined ? ''.padStart(7) : seconds(from).padStart(7)}  ${seconds(ms).padStart(8)}  ${cpuCell(machine)}  ${cpuCell(own)}  ${((machine ?? own) / Math.max(ms / 1000, 0.001)).toFixed(2).padStart(5)}  ${status}`,
    )
  console.log(
    `  ${''.padEnd(width)}  ${'start'.padStart(7)}  ${'wall'.padStart(8)}  ${'machine'.padStart(8)}  ${'own'.padStart(8)}  ${'cores'.padStart(5)}`,
  )
  for (const { name, from, ms, machine, cpu, state, code, shared } of results)
    line(
      name,
      from,
      ms,
      machine,
      cpu,
      `${state === 'passed' ? 'ok' : `FAILED (exit ${code})`}${shared ? ' *' : ''}`,
    )
  line(
    'total',
    undefined,
    total,
    machineTotal,
    results.reduce((sum, { cpu }) => sum + cpu, 0),
    '',
  )
  if (results.some(({ shared }) => shared))
    console.log(
      "  * ran beside another step for some of its time: the machine's CPU of that time is both's",
    )
}

/**
 * test-results/steps.json: how each chosen step ended (`not run` after a failure), and the report
 * its runner writes (`reportOf`), for the closing line of .ci/run: a failed step counts once unless
 * its report counted a failing test.
 * @param {{ name: string, state?: string, code?: number }[]} ends
 */
function writeStepEnds(ends) {
  const dir = join(root, 'test-results')
  mkdirSync(dir, { recursive: true })
  const steps = ends.map(({ name, state, code }) => ({
    name,
    state: state ?? 'not run',
    ...(code === undefined ? {} : { code }),
    ...(name in reportOf ? { report: reportOf[/** @type {keyof typeof reportOf} */ (name)] } : {}),
  }))
  writeFileSync(join(dir, stepsFile), `${JSON.stringify({ steps }, null, 2)}\n`)
}

async function main(args) {
  const option = (flag) => {
    const at = args.indexOf(flag)
    return at === -1 ? undefined : args[at + 1]
  }
  const all = steps.map(([name, , needs]) => ({ name, needs }))
  checkNeeds(all)
  const names = all.map(({ name }) => name)
  if (args.includes('--list')) {
    for (const [name, command, needs] of steps)
      console.log(
        `${name}${needs ? ` (after ${needs.join(', ')})` : ''}: ${[command].flat().join('  |  ')}`,
      )
    return 0
  }
  const only = option('--only')?.split(',')
  const from = option('--from')
  for (const name of [...(only ?? []), ...(from ? [from] : [])])
    if (!names.includes(name)) {
      console.error(`no step "${name}"; the steps: ${names.join(', ')}`)
      return 2
    }
  const jobsOption = option('--jobs')
  const jobs = jobsOption === undefined ? Math.min(2, availableParallelism()) : Number(jobsOption)
  if (!Number.isInteger(jobs) || jobs < 1) {
    console.error(`--jobs takes a whole number of steps at a time, 1 or more, not "${jobsOption}"`)
    return 2
  }
  const chosen = all.filter(
    ({ name }) =>
      (!only || only.includes(name)) && (!from || names.indexOf(name) >= names.indexOf(from)),
  )
  const commands = new Map(steps.map(([name, command]) => [name, command]))
  const keepGoing = args.includes('--keep-going')
  /** @type {Map<string, import('./lib/schedule.mjs').StepState>} */
  const states = new Map(chosen.map(({ name }) => [name, 'waiting']))
  // Alone, a step prints as it comes; beside another, each of its lines is led by its name.
  const alone = jobs === 1 || chosen.length === 1
  const width = Math.max(...chosen.map(({ name }) => name.length))
  const results = new Map()
  /** The steps running now: each one's promise, and whether another ran beside it. */
  const running = new Map()
  const started = performance.now()
  const busyAtStart = machineBusy()
  const machineTotal = () => {
    const now = machineBusy()
    return busyAtStart === undefined || now === undefined ? undefined : now - busyAtStart
  }
  const interrupt = (signal) => {
    for (const pid of groups) stopGroup(pid)
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }
  process.once('SIGINT', interrupt)
  process.once('SIGTERM', interrupt)

  const start = (name) => {
    const command = commands.get(name)
    states.set(name, 'running')
    console.log(`\n▶ ${name}: ${[command].flat().join('  |  ')}`)
    const print = alone ? undefined : (line) => console.log(`${name.padEnd(width)} │ ${line}`)
    const from = performance.now() - started
    const busyBefore = machineBusy()
    const entry = { shared: running.size > 0 }
    for (const other of running.values()) other.shared = true
    entry.done = runStep(name, command, print).then(({ code, cpu }) => {
      const busyAfter = machineBusy()
      const machine =
        busyBefore === undefined || busyAfter === undefined ? undefined : busyAfter - busyBefore
      const state = code === 0 ? 'passed' : 'failed'
      states.set(name, state)
      const ms = performance.now() - started - from
      results.set(name, { name, from, ms, machine, cpu, code, state, shared: entry.shared })
      console.log(
        `◀ ${name}: ${seconds(ms)}, CPU ${machine === undefined ? '' : `${machine.toFixed(1)} s (the machine), `}${cpu.toFixed(1)} s (its own), ${state === 'passed' ? 'ok' : `exit ${code}`}`,
      )
      if (state === 'failed' && !keepGoing && running.size > 1)
        console.log(
          `  (no other step starts; ${[...running.keys()].filter((other) => other !== name).join(', ')} ends as it would)`,
        )
      running.delete(name)
    })
    running.set(name, entry)
  }
  for (;;) {
    for (const name of stepsToStart(chosen, states, { jobs, keepGoing })) start(name)
    if (running.size === 0) break
    await Promise.race([...running.values()].map(({ done }) => done))
  }

  const ran = chosen.map(({ name }) => results.get(name)).filter(Boolean)
  summary(ran, performance.now() - started, machineTotal(), jobs)
  writeStepEnds(chosen.map(({ name }) => ({ name, ...results.get(name) })))
  const failed = ran.find(({ state }) => state === 'failed')
  if (failed) {
    const notRun = chosen.filter(({ name }) => states.get(name) === 'waiting')
    if (notRun.length > 0)
      console.log(`\nNot run after the failure: ${notRun.map(({ name }) => name).join(', ')}`)
    console.log(
      `\nStep "${failed.name}" failed; rerun it: node scripts/test.mjs --only "${failed.name}" (or from it: --from "${failed.name}")`,
    )
    return failed.code
  }
  return 0
}

process.exitCode = await main(process.argv.slice(2))
