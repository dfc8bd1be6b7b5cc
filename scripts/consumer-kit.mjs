// `pnpm test:consumer-kit`: the guide "Your own backend" followed by a new user. Packs core, react
// and server, makes a fresh Next.js app outside the repository whose files are the guide's titled
// code blocks, verbatim (guide-files.mjs), builds and starts it with the mock OpenAI-compatible
// provider (scripts/n8n/mock-openai.mjs), and from Node, with a cookie as a browser keeps it and
// every request to the app's own origin (no proxy), checks: an answer streams; a reload mid-answer
// reads the answer so far with `activeExecutionId` and follows the push to its end; a second
// connection's Stop is accepted, the record ends `cancelled` and the model's request is aborted.
// Every wait has a deadline; every process and the temp directory go, also on failure.
// [R-DOCS-OWN-BACKEND-RUNS]
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { freePort } from './free-port.mjs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { guideFiles } from './guide-files.mjs'
import { packTarballs } from './pack-tarballs.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const guide = 'site/docs/guide/own-backend.mdx'
/** What a Next.js reader must be able to write from the guide. */
const required = ['app/rest/[...path]/route.ts', 'app/chat-backend.server.ts']
const started = Date.now()
const work = mkdtempSync(join(tmpdir(), 'preview-chat-consumer-kit-'))
const app = join(work, 'app')
/** @type {import('node:child_process').ChildProcess[]} */
const children = []

const step = (text) =>
  console.log(`\n[consumer-kit ${((Date.now() - started) / 1000).toFixed(0)}s] ${text}`)
const run = (command, args, cwd) => {
  console.log(`$ ${command} ${args.join(' ')}`)
  execFileSync(command, args, { cwd, stdio: 'inherit', env: appEnv, timeout: 10 * 60_000 })
}
const fail = (message) => {
  throw new Error(message)
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `probe` until it answers a value other than undefined, or fails naming `what`. */
async function until(what, probe, ms) {
  const deadline = Date.now() + ms
  let last
  while (Date.now() < deadline) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    await sleep(100)
  }
  fail(`${what}: not within ${ms / 1000}s${last ? ` (last: ${last.message})` : ''}`)
}

function start(name, command, args, cwd) {
  // Its own process group, so that stopping it stops what it started (next start's workers).
  const child = spawn(command, args, {
    cwd,
    env: appEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  const keep = (chunk) => {
    output = (output + chunk).slice(-4000)
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  child.on('exit', (code, signal) => {
    if (!stopping) console.log(`${name} exited (${code ?? signal}); its last output:\n${output}`)
  })
  children.push(child)
  return child
}
let stopping = false

/** The `data:` blocks of an SSE body, each as its text, until the stream ends or is aborted. */
async function* sseData(body) {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n')
    let end
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line[5] === ' ' ? 6 : 5))
      if (data.length > 0) yield data.join('\n')
    }
  }
}

// A stream's error that nothing awaits (a connection cut as the app stops) is a failure that still
// lets the cleanup below finish, never a crash that leaves the app running.
process.on('unhandledRejection', (error) => {
  console.error(`consumer kit: unhandled: ${error?.message ?? error}`)
  process.exitCode = 1
})
const appEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', CI: 'true' }
let summary = []
/** The push stream's reader: stopped before the app, so that its end is no failure. */
const push = new AbortController()

try {
  // The app a reader makes: create-next-app's manifest, the guide's install line, our tarballs.
  // The guide first: a guide that cannot make the app fails before anything is packed.
  const files = guideFiles(readFileSync(join(root, guide), 'utf8'), { guide, required })
  step(`packing core, react, server; the app in ${app}`)
  mkdirSync(join(work, 'tarballs'), { recursive: true })
  const tarballs = packTarballs(root, ['core', 'react', 'server'], join(work, 'tarballs'))
  const example = JSON.parse(readFileSync(join(root, 'examples/own-backend/package.json'), 'utf8'))
  const pin = (name) =>
    example.dependencies[name] ??
    example.devDependencies[name] ??
    fail(`examples/own-backend pins no ${name}`)
  mkdirSync(app)
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify(
      {
        name: 'my-chat-app',
        private: true,
        scripts: { build: 'next build', start: 'next start' },
        dependencies: {
          ...tarballs,
          next: pin('next'),
          react: pin('react'),
          'react-dom': pin('react-dom'),
          ai: pin('ai'),
          '@ai-sdk/openai-compatible': pin('@ai-sdk/openai-compatible'),
        },
        devDependencies: {
          typescript: pin('typescript'),
          '@types/node': pin('@types/node'),
          '@types/react': pin('@types/react'),
          '@types/react-dom': pin('@types/react-dom'),
        },
      },
      null,
      2,
    ),
  )
  for (const [path, code] of Object.entries(files)) {
    mkdirSync(dirname(join(app, path)), { recursive: true })
    writeFileSync(join(app, path), code)
  }
  console.log(`from ${guide}: ${Object.keys(files).join(', ')}`)

  step('npm install, next build')
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], app)
  run('npx', ['next', 'build'], app)

  // What the guide tells the reader to provide: the provider's endpoint and key, the secret.
  const mockPort = await freePort()
  const appPort = await freePort()
  appEnv.OPENAI_BASE_URL = `http://127.0.0.1:${mockPort}/v1`
  appEnv.OPENAI_API_KEY = 'the-mock-needs-none'
  appEnv.SESSION_SECRET = randomBytes(32).toString('hex')
  step(`mock provider on ${mockPort}, next start on ${appPort}`)
  start(
    'mock-openai',
    process.execPath,
    [join(root, 'scripts/n8n/mock-openai.mjs'), '--port', String(mockPort)],
    root,
  )
  start(
    'next start',
    join(app, 'node_modules/.bin/next'),
    ['start', '-H', '127.0.0.1', '-p', String(appPort)],
    app,
  )
  const origin = `http://127.0.0.1:${appPort}`
  const health = async () => await (await fetch(`http://127.0.0.1:${mockPort}/health`)).json()
  await until('the mock provider answers /health', health, 15_000)
  await until(
    'next start answers',
    async () => (await fetch(`${origin}/sign-in`)).status > 0 || undefined,
    60_000,
  )

  // The contract's parsers, from the tarball the app installed.
  const fromApp = createRequire(join(app, 'package.json'))
  const contract = await import(pathToFileURL(fromApp.resolve('@preview-chat/core/contract')).href)
  const parsed = (result) => (result.success ? result.value : fail(result.error.message))

  // Sign in as the guide's route does; keep the cookie as a browser would.
  const unsigned = await fetch(
    `${origin}/rest/projects/p/agents/v2/a/chat/${randomUUID()}/messages`,
  )
  if (unsigned.status !== 401) fail(`a read without a session answered ${unsigned.status}, not 401`)
  const signIn = await fetch(`${origin}/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ name: 'ada' }),
    redirect: 'manual',
  })
  const cookie = signIn.headers.get('set-cookie')?.split(';')[0]
  if (signIn.status !== 303 || !cookie)
    fail(`the sign-in answered ${signIn.status} with no session cookie`)
  const headers = { cookie }
  const chatPath = `${origin}/rest/projects/my-project/agents/v2/assistant/chat`
  const words = (n) => Array.from({ length: n }, (_, i) => `word${i + 1}`).join(' ')

  /** Sends a message; answers the turn's events as they come, and the controller that drops it. */
  async function send(threadId, message) {
    const controller = new AbortController()
    const response = await fetch(chatPath, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message, sessionId: threadId, newSession: true }),
      signal: AbortSignal.any([controller.signal, AbortSignal.timeout(60_000)]),
    })
    if (response.status !== 200)
      fail(`the send answered ${response.status}: ${await response.text()}`)
    async function* events() {
      for await (const data of sseData(response.body)) {
        const result = contract.parseTurnEvent(data)
        if (result.kind === 'invalid') fail(result.error.message)
        if (result.kind === 'event') yield result.event
      }
    }
    return { events: events(), drop: () => controller.abort() }
  }
  /** A history read on its own request, as a reloaded page makes it. */
  async function read(threadId) {
    const response = await fetch(`${chatPath}/${threadId}/messages`, { headers })
    if (response.status !== 200) fail(`the history read answered ${response.status}`)
    const snapshot = parsed(contract.parseHistorySnapshot(await response.json()))
    const answer = snapshot.messages.find((m) => m.role === 'assistant')
    const text =
      answer?.content
        .filter((p) => p.type === 'text')
        .map((p) => p.text)
        .join('') ?? ''
    return { snapshot, answer, text }
  }
  /**
   * Text deltas until `stopAfter` of them (or the end), checking that the turn starts with
   * `execution-started` (unless it did already: `startedAs`, its execution id).
   */
  async function stream(turn, stopAfter = Infinity, startedAs = undefined) {
    let executionId = startedAs
    let text = ''
    let deltas = 0
    let last
    // next(), not for await: leaving the loop must not close the stream (the Stop step reads on).
    for (let item = await turn.events.next(); !item.done; item = await turn.events.next()) {
      const event = item.value
      if (executionId === undefined) {
        if (event.type !== 'execution-started')
          fail(`the turn began with ${event.type}, not execution-started`)
        executionId = event.executionId
      }
      if (event.type === 'text-delta') {
        text += event.delta
        if (++deltas >= stopAfter) break
      }
      last = event
    }
    return { executionId, text, deltas, last }
  }

  // 1. An answer streams to its end.
  step('1. an answer streams')
  const first = await stream(await send(randomUUID(), 'Hello [[words=12 delay=20]]'))
  if (first.last?.type !== 'done') fail(`the stream ended with ${first.last?.type}, not done`)
  if (first.text !== words(12)) fail(`the streamed answer is "${first.text}", not "${words(12)}"`)
  summary.push(`streamed: ${first.deltas} text deltas, then done`)

  // 2. A reload mid-answer: the page's connection goes, a new one reads, the push leads to the end.
  step('2. a reload mid-answer')
  const reloadThread = randomUUID()
  const reloading = await send(reloadThread, 'Count [[words=60 delay=50]]')
  const before = await stream(reloading, 3)
  reloading.drop()
  const pushResponse = await fetch(`${origin}/rest/push`, {
    headers: { ...headers, accept: 'text/event-stream' },
    signal: AbortSignal.any([push.signal, AbortSignal.timeout(120_000)]),
  })
  if (pushResponse.status !== 200) fail(`the push stream answered ${pushResponse.status}`)
  let pushed = 0
  const pushing = (async () => {
    try {
      for await (const data of sseData(pushResponse.body)) {
        if (contract.parsePushMessage(data).kind === 'message') pushed++
      }
    } catch (error) {
      if (!push.signal.aborted) return error
    }
    return undefined
  })()
  // Snapshots are recorded in batches: the read shows the latest one, while the turn runs on.
  const reloaded = await until(
    'a read after the reload shows the answer so far',
    async () => {
      const now = await read(reloadThread)
      return now.text !== '' || now.snapshot.activeExecutionId !== before.executionId
        ? now
        : undefined
    },
    10_000,
  )
  if (reloaded.snapshot.activeExecutionId !== before.executionId)
    fail(
      `after the reload activeExecutionId is ${reloaded.snapshot.activeExecutionId}, not the running ${before.executionId}`,
    )
  if (reloaded.text === '' || !words(60).startsWith(reloaded.text))
    fail(`after the reload the answer so far is "${reloaded.text}", not a start of the answer`)
  let reads = 0
  // As the page does: a read on each push notification, until no execution runs.
  const ended = await until(
    'the reloaded answer reaches its end',
    async () => {
      const seen = pushed
      reads++
      const now = await read(reloadThread)
      if (now.snapshot.activeExecutionId === null) return now
      await until('a push notification', () => (pushed > seen ? true : undefined), 10_000)
      return undefined
    },
    30_000,
  )
  if (ended.answer?.executionStatus !== 'success' || ended.text !== words(60))
    fail(
      `the reloaded answer ended ${ended.answer?.executionStatus} with "${ended.text.slice(-40)}"`,
    )
  if ((await health()).aborted !== 0)
    fail('the reload aborted the model request; the turn must outlive its connection')
  summary.push(
    `reload: ${reloaded.text.split(' ').filter(Boolean).length} words so far with activeExecutionId, ${reads} push-led reads to the end (${ended.text.split(' ').filter(Boolean).length} words, success)`,
  )

  // 3. A second tab's Stop: another connection deletes the execution while the first streams.
  step("3. a second tab's Stop")
  const stopThread = randomUUID()
  const running = await send(stopThread, 'Go on [[words=400 delay=50]]')
  const so = await stream(running, 3)
  const stop = await fetch(`${chatPath}/${stopThread}/executions/${so.executionId}`, {
    method: 'DELETE',
    headers,
  })
  if (stop.status !== 200) fail(`the Stop answered ${stop.status}: ${await stop.text()}`)
  const answer = parsed(contract.parseStopAnswer(await stop.json()))
  if (answer.cancelRequested !== true)
    fail(`the Stop answered ${stop.status} ${JSON.stringify(answer)}`)
  const rest = await stream(running, Infinity, so.executionId)
  const stopped = await until(
    'the record ends cancelled',
    async () => {
      const now = await read(stopThread)
      return now.snapshot.activeExecutionId === null ? now : undefined
    },
    15_000,
  )
  if (stopped.answer?.executionStatus !== 'cancelled')
    fail(`after the Stop the record is ${stopped.answer?.executionStatus}, not cancelled`)
  const aborted = await until(
    'the mock sees the model request aborted',
    async () => ((await health()).aborted >= 1 ? (await health()).aborted : undefined),
    10_000,
  )
  summary.push(
    `stop: {cancelRequested:true}, the first tab's stream ended with ${rest.last?.type}, record cancelled at ${stopped.text.split(' ').filter(Boolean).length} of 400 words, mock aborted=${aborted}`,
  )
  push.abort()
  const pushError = await pushing
  if (pushError) fail(`the push stream failed: ${pushError.message}`)
  summary.push(`push: ${pushed} agentExecutionUpdated messages, all to ${origin} (no proxy)`)
  console.log(
    `\nconsumer kit: the guide's Next.js app works from the tarballs (${((Date.now() - started) / 1000).toFixed(0)}s)\n  ${summary.join('\n  ')}`,
  )
} catch (error) {
  console.error(
    `\nconsumer kit FAILED after ${((Date.now() - started) / 1000).toFixed(0)}s: ${error.message}`,
  )
  if (summary.length > 0) console.error(`  passed before it:\n  ${summary.join('\n  ')}`)
  process.exitCode = 1
} finally {
  stopping = true
  push.abort()
  for (const child of children) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    const group = (signal) => {
      try {
        process.kill(-child.pid, signal)
      } catch {
        // ESRCH: nothing left in the group.
      }
    }
    if (child.exitCode === null && child.signalCode === null) {
      group('SIGTERM')
      await Promise.race([exited, sleep(5000)])
    }
    // Whatever the leader left behind in its group.
    group('SIGKILL')
  }
  rmSync(work, { recursive: true, force: true })
}
