// A real Postgres for the tests, on this machine and in CI: Debian's `postgresql` (installed with
// apt-get when missing, as scripts/ensure-chromium.mjs installs Chromium), a fresh cluster in a
// temp directory, started on a free loopback port with its unix socket in that directory, and
// removed at the end. Postgres refuses to run as root: as root, initdb and the server run as the
// `postgres` user the package creates (the spawned process itself takes that uid, so its pid is the
// server's own and a signal reaches it directly).
//
// As a module: `const pg = await startPostgres()` → `{ url, port, dir, down(), up(), restart(),
// stop() }`. As a command: `node scripts/services/postgres.mjs` prints the URL and runs until
// Ctrl-C. Plain Node, no dependencies.
import { execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { freePort } from '../free-port.mjs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const versionsDir = '/usr/lib/postgresql'
const database = 'preview_chat'
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0

/** The directory of Debian's Postgres binaries (the newest installed major), or null. */
function findBinaries() {
  if (!existsSync(versionsDir)) return null
  const majors = readdirSync(versionsDir)
    .filter((name) => existsSync(join(versionsDir, name, 'bin/postgres')))
    .sort((a, b) => Number(b) - Number(a))
  return majors.length > 0 ? join(versionsDir, majors[0], 'bin') : null
}

/**
 * Debian's Postgres binaries, installed when missing and we may (root, apt-get); otherwise an
 * error that says what to install.
 */
export function ensurePostgres() {
  const found = findBinaries()
  if (found) return found
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    throw new Error(
      `${versionsDir}/*/bin/postgres is missing. Install Debian's Postgres (as root: apt-get update && apt-get install -y postgresql), or set PREVIEW_CHAT_TEST_PG_URL to a database the tests may use.`,
    )
  }
  console.log(`${versionsDir}/*/bin/postgres is missing: installing Debian's postgresql package…`)
  execFileSync(
    'sh',
    ['-c', 'apt-get update && apt-get install -y --no-install-recommends postgresql'],
    { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } },
  )
  const installed = findBinaries()
  if (!installed)
    throw new Error(`apt-get ran, but ${versionsDir}/*/bin/postgres is still missing.`)
  return installed
}

/** The uid and gid to run Postgres as: the `postgres` user as root, else our own. */
function serverUser() {
  if (!isRoot) return {}
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/** Runs the server until `ready` (its log says it accepts connections); rejects if it exits first. */
function spawnServer(bin, user, dir, port) {
  const args = ['-D', join(dir, 'data'), '-k', dir, '-h', '127.0.0.1', '-p', String(port)]
  // A test cluster: durability traded for speed (a crash of the machine loses the test database).
  for (const setting of ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'])
    args.push('-c', setting)
  const child = spawn(join(bin, 'postgres'), args, {
    ...user,
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  // A test run that ends without stopping it (a crash, an exit) takes the server with it.
  const orphan = () => child.kill('SIGQUIT')
  process.once('exit', orphan)
  child.once('exit', () => process.off('exit', orphan))
  let log = ''
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const ready = new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk) => {
      // Keep the tail only: enough to explain a failed start.
      log = (log + chunk).slice(-4000)
      if (log.includes('ready to accept connections')) resolve()
    })
    exited.then(({ code, signal }) =>
      reject(new Error(`postgres exited (${signal ?? code}) before it was ready:\n${log}`)),
    )
  })
  return { child, ready, exited }
}

/**
 * Starts a fresh Postgres cluster on a free loopback port, with an empty database `preview_chat`.
 * `down()` stops the server and keeps its data and port; `up()` starts it again (a fault test's
 * restart: `restart()` is both); `stop()` stops it and removes its directory.
 */
export async function startPostgres() {
  const bin = ensurePostgres()
  const user = serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'preview-chat-pg-'))
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid)
  const run = (command, args) =>
    execFileSync(join(bin, command), args, { ...user, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
  run('initdb', [
    '-D',
    join(dir, 'data'),
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--locale=C.UTF-8',
    '--no-sync',
  ])
  const port = await freePort()
  let server = null
  const up = async () => {
    if (server) return
    const started = spawnServer(bin, user, dir, port)
    server = started
    try {
      await started.ready
    } catch (error) {
      server = null
      throw error
    }
  }
  const down = async () => {
    if (!server) return
    const { child, exited } = server
    server = null
    // SIGINT is Postgres's "fast" shutdown: open connections are ended, the data is kept.
    child.kill('SIGINT')
    await exited
  }
  const stop = async () => {
    await down()
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await up()
    run('createdb', ['-h', dir, '-p', String(port), '-U', 'postgres', database])
  } catch (error) {
    await stop()
    throw error
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${database}`,
    port,
    dir,
    up,
    down,
    restart: async () => {
      await down()
      await up()
    },
    stop,
  }
}

// As a command: start, print the URL, stop on Ctrl-C or SIGTERM.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const postgres = await startPostgres()
  console.log(postgres.url)
  const end = () => postgres.stop().then(() => process.exit(0))
  process.once('SIGINT', end)
  process.once('SIGTERM', end)
}
