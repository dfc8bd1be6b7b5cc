// `pnpm test:fuzz`: the property and model suites on fresh seeds, round after round, for a set
// time; each seed is printed as its suite starts (each suite runs on four fresh seeds a round). Stops by itself when the time is up (the round
// then running is ended, not counted), or at the first failing round, with its seed and how to
// add it to scripts/seeds.json (CONTRIBUTING, "Seeds").
//
//   pnpm test:fuzz --minutes 10                       every property suite
//   pnpm test:fuzz --minutes 3 --project core queue.model -t "with dedupe"
//
// Anything after the options goes to `vitest run` as it is (projects, files, `-t`); without any,
// the rounds run every test file that imports fast-check.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
/** Fresh seeds each suite runs on, one after another, per round (one vitest start per round). */
const seedsPerRound = 4

/** Every test file that imports fast-check (the rule of property-timeouts.test.ts). */
function propertySuites() {
  const walk = (dir) =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) return []
      if (statSync(path).isDirectory()) return walk(path)
      return /\.test\.tsx?$/.test(name) ? [path] : []
    })
  return ['packages', 'bench/src']
    .flatMap((dir) => walk(join(root, dir)))
    .filter((file) => /^import .+ from 'fast-check'$/m.test(readFileSync(file, 'utf8')))
    .map((file) => relative(root, file))
}

/** One round: `vitest run` on fresh seeds. Resolves with its exit code and output. */
function round(args, onLine) {
  const child = spawn('npx', ['vitest', 'run', '--reporter=default', ...args], {
    cwd: root,
    env: {
      ...process.env,
      PREVIEW_CHAT_SEED: 'fresh',
      PREVIEW_CHAT_FRESH_SEEDS: String(seedsPerRound),
      FORCE_COLOR: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  let partial = ''
  const take = (chunk) => {
    output += chunk
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) onLine(line)
  }
  child.stdout.on('data', take)
  child.stderr.on('data', take)
  const done = new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, output })),
  )
  return { done, stop: () => process.kill(-child.pid, 'SIGTERM') }
}

async function main(argv) {
  let minutes = 10
  const at = argv.indexOf('--minutes')
  const rest = [...argv]
  if (at !== -1) {
    minutes = Number(argv[at + 1])
    rest.splice(at, 2)
  }
  if (!(minutes > 0)) {
    console.error('--minutes takes a number of minutes greater than 0, e.g. --minutes 5')
    return 2
  }
  const args = rest.length > 0 ? rest : propertySuites()
  const deadline = Date.now() + minutes * 60_000
  console.log(`test:fuzz: fresh seeds for ${minutes} min on: vitest run ${args.join(' ')}`)
  let rounds = 0
  let seeds = 0
  while (Date.now() < deadline) {
    const current = round(args, (line) => {
      if (!line.includes('[property] ')) return
      if (/: seed -?\d+ \(fresh\)/.test(line)) seeds++
      console.log(`  round ${rounds + 1}: ${line.slice(line.indexOf('[property] ') + 11)}`)
    })
    const timer = setTimeout(current.stop, Math.max(0, deadline - Date.now()))
    const { code, signal, output } = await current.done
    clearTimeout(timer)
    if (signal || Date.now() >= deadline) break // the time is up mid-round: not a result
    rounds++
    if (code !== 0) {
      console.log(output)
      const failed = [...output.matchAll(/\{ seed: (-?\d+), path: "([^"]*)"/g)]
      console.log(`\ntest:fuzz: round ${rounds} FAILED (${seeds} seeds so far).`)
      for (const [, seed, path] of failed)
        console.log(
          `  seed ${seed} (run ${path}): find its suite's name in the "[property] <name>: seed ${seed}" line above and add { "seed": ${seed}, "found": "<what it found>" } under that name in scripts/seeds.json's "suites"; replay it with the command printed there.`,
        )
      if (failed.length === 0) console.log('  (no seed in the failure: not a property failure?)')
      return 1
    }
  }
  console.log(`\ntest:fuzz: ${rounds} rounds, ${seeds} fresh seeds, no failure in ${minutes} min.`)
  return 0
}

process.exitCode = await main(process.argv.slice(2))
