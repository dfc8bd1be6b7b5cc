// A real Redis for the tests: Debian's redis-server, installed when missing (as
// ensure-chromium.mjs installs Chromium), started as a child process on a free loopback port with
// nothing saved to disk, and stopped at the end. `node scripts/services/redis.mjs` starts one and
// prints its URL until Ctrl-C.
import { execSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { freePort } from '../free-port.mjs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const binary = '/usr/bin/redis-server'
/** How long a start may take before it counts as failed (a loaded 2-core machine included). */
const startTimeoutMs = 20_000

/** Installs Debian's redis-server when it is missing and we may (root, apt-get); throws otherwise. */
export function ensureRedisServer() {
  if (existsSync(binary)) return binary
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    throw new Error(
      `${binary} is missing. Install Debian's Redis (as root: apt-get update && apt-get install -y redis-server), then run the tests again.`,
    )
  }
  console.log(`${binary} is missing: installing Debian's redis-server package…`)
  const apt = (command) =>
    execSync(command, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    })
  const install = 'apt-get install -y --no-install-recommends redis-server'
  try {
    apt(install)
  } catch {
    // A fresh machine's package lists may not know the package yet.
    apt(`apt-get update && ${install}`)
  }
  if (!existsSync(binary)) throw new Error(`apt-get ran, but ${binary} is still missing.`)
  return binary
}

/** Starts redis-server on `port` in `dir`; resolves with the child once it accepts connections. */
function launch(port, dir) {
  const child = spawn(
    binary,
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--protected-mode',
      'yes',
      '--loglevel',
      'notice',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`redis-server did not start within ${startTimeoutMs} ms:\n${output}`))
    }, startTimeoutMs)
    const onData = (chunk) => {
      output += chunk
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer)
        child.stdout.off('data', onData)
        // Keep draining its output so that a full pipe never blocks it.
        child.stdout.resume()
        child.stderr.resume()
        child.off('exit', onExit)
        resolve(child)
      }
    }
    const onExit = (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`redis-server exited (${signal ?? code}) before it was ready:\n${output}`))
    }
    child.stdout.setEncoding('utf8').on('data', onData)
    child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk))
    child.once('exit', onExit)
  })
}

/** Ends the child and waits for its exit. */
function halt(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

/**
 * Starts a private redis-server on a free loopback port. `stop()` ends it and removes its
 * directory; `restart()` ends it and starts a new one on the same port (what a test that restarts
 * Redis mid-turn does); `down()` and `up()` do the same in two steps, for a test that acts while
 * Redis is away.
 */
export async function startRedis() {
  ensureRedisServer()
  const dir = mkdtempSync(join(tmpdir(), 'preview-chat-redis-'))
  const port = await freePort()
  let child = await launch(port, dir)
  // A test runner that exits without calling stop() still leaves nothing listening.
  const onExit = () => child.kill('SIGKILL')
  process.once('exit', onExit)
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart() {
      await halt(child)
      child = await launch(port, dir)
    },
    async down() {
      await halt(child)
    },
    async up() {
      if (child.exitCode === null && child.signalCode === null) return
      child = await launch(port, dir)
    },
    async stop() {
      process.off('exit', onExit)
      await halt(child)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The variable through which the global setup hands its Redis to the test files. */
export const testRedisUrlVariable = 'PREVIEW_CHAT_TEST_REDIS_URL'

/**
 * The Redis a test file shares with the others: the global setup's (`PREVIEW_CHAT_TEST_REDIS_URL`)
 * when there is one, else one started for this file alone (so one file also runs by itself).
 * A test that stops or restarts Redis starts its own with `startRedis()` instead.
 */
export async function sharedTestRedis() {
  const url = process.env[testRedisUrlVariable]
  if (url) return { url, stop: async () => {} }
  const redis = await startRedis()
  return { url: redis.url, stop: () => redis.stop() }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const redis = await startRedis()
  console.log(`Redis listening at ${redis.url} (Ctrl-C stops it)`)
  const end = () => redis.stop().then(() => process.exit(0))
  process.once('SIGINT', end)
  process.once('SIGTERM', end)
}
