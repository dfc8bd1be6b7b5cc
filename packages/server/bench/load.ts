/**
 * `pnpm --filter @preview-chat/server bench:load [--streams 200] [--readers 200] [--seconds 30]
 * [--delta-ms 40] [--snapshot-ms 250] [--settle-seconds 5]`
 *
 * The load benchmark of the reference server (issue 12): `streams` clients each post a message
 * turn and read its stream to the end, again and again, while `readers` clients read the history
 * of threads those turns made, for a fixed time, all over loopback. It prints requests, errors,
 * read and turn latencies, and the server's memory: before (after a short warm-up), right after,
 * after `settle-seconds`, and once the recorded threads are dropped (what is left then is held by
 * something else). The server runs in a child process with --expose-gc, so each figure is what it
 * still holds, not garbage. It measures; it asserts nothing, and no test runs it.
 */
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { startServerProcess } from './server-process'

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '200' },
    readers: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '30' },
    'delta-ms': { type: 'string', default: '40' },
    'snapshot-ms': { type: 'string', default: '250' },
    'settle-seconds': { type: 'string', default: '5' },
  },
})
const streams = Number(values.streams)
const readers = Number(values.readers)
const seconds = Number(values.seconds)
const settleSeconds = Number(values['settle-seconds'])

const chatPath = '/rest/projects/load/agents/v2/agent/chat'
const users = ['alice', 'bob']
const message = 'Please summarise the quarterly numbers for the team meeting.'

// --- the server, in its own process ---------------------------------------------------------

const server = startServerProcess({
  LOAD_DELTA_MS: values['delta-ms'],
  LOAD_SNAPSHOT_MS: values['snapshot-ms'],
})
const measure = server.measure

// --- the clients ------------------------------------------------------------------------------

interface Run {
  requests: number
  errors: number
  firstErrors: string[]
  readLatencies: number[]
  turnLatencies: number[]
  /** Threads whose first turn ended, for readers to read (as their owner). */
  threads: { id: string; user: string }[]
}

/** `streamCount` turn streams and `readerCount` history readers on `url` for `ms`. */
async function runLoad(url: string, streamCount: number, readerCount: number, ms: number) {
  const run: Run = {
    requests: 0,
    errors: 0,
    firstErrors: [],
    readLatencies: [],
    turnLatencies: [],
    threads: [],
  }
  const deadline = Date.now() + ms
  const fail = (what: string) => {
    run.errors++
    if (run.firstErrors.length < 5) run.firstErrors.push(what)
  }

  const streamLoop = async (user: string) => {
    while (Date.now() < deadline) {
      const id = crypto.randomUUID()
      const started = performance.now()
      run.requests++
      try {
        const response = await fetch(`${url}${chatPath}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${user}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ message, sessionId: id, newSession: true }),
        })
        const text = await response.text()
        if (response.status !== 200 || !text.includes('"type":"done"')) {
          fail(`turn answered ${response.status}: ${text.slice(0, 120)}`)
          continue
        }
        run.turnLatencies.push(performance.now() - started)
        run.threads.push({ id, user })
      } catch (error) {
        fail(`turn failed: ${String(error)}`)
      }
    }
  }

  const readLoop = async () => {
    while (Date.now() < deadline) {
      const thread = run.threads[Math.floor(Math.random() * run.threads.length)]
      if (!thread) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        continue
      }
      const started = performance.now()
      run.requests++
      try {
        const response = await fetch(`${url}${chatPath}/${thread.id}/messages`, {
          headers: { Authorization: `Bearer ${thread.user}` },
        })
        const body = await response.text()
        if (response.status !== 200) fail(`read answered ${response.status}: ${body.slice(0, 120)}`)
        else run.readLatencies.push(performance.now() - started)
      } catch (error) {
        fail(`read failed: ${String(error)}`)
      }
    }
  }

  await Promise.all([
    ...Array.from({ length: streamCount }, (_, index) => streamLoop(users[index % 2] as string)),
    ...Array.from({ length: readerCount }, () => readLoop()),
  ])
  return run
}

function percentile(values: number[], p: number): string {
  if (values.length === 0) return 'n/a'
  const sorted = [...values].sort((a, b) => a - b)
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)
  return `${Math.round(sorted[Math.max(0, index)] as number)} ms`
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

// --- the run ------------------------------------------------------------------------------------

const url = await server.ready()
// A short warm-up, forgotten before "before": the code that serves a turn is compiled and loaded
// then, so that "before" and "after" differ by what the load left behind, not by warm code.
await runLoad(url, 10, 10, 2000)
const before = await measure('forget')
const run = await runLoad(url, streams, readers, seconds * 1000)
const after = await measure()
await new Promise((resolve) => setTimeout(resolve, settleSeconds * 1000))
const settled = await measure()
const forgotten = await measure('forget')
await server.close()

const turns = run.turnLatencies.length
console.log(`
reference server load — Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}
${streams} turn streams + ${readers} history readers for ${seconds} s (deltaMs ${values['delta-ms']}, snapshotMs ${values['snapshot-ms']}), loopback

requests     ${run.requests} (${turns} turns, ${run.readLatencies.length} reads)
errors       ${run.errors}${run.firstErrors.map((line) => `\n  ${line}`).join('')}
read         p50 ${percentile(run.readLatencies, 50)}, p99 ${percentile(run.readLatencies, 99)}
turn         p50 ${percentile(run.turnLatencies, 50)}, p99 ${percentile(run.turnLatencies, 99)}
server cpu   ${((after.cpu - before.cpu) / 1000 / seconds).toFixed(0)} ms per s, ${((after.cpu - before.cpu) / Math.max(1, run.requests)).toFixed(0)} µs per request
heap (gc'd)  before ${mb(before.heapUsed)}, after ${mb(after.heapUsed)}, after ${settleSeconds} s ${mb(settled.heapUsed)} (${turns > 0 ? `${((settled.heapUsed - before.heapUsed) / turns / 1024).toFixed(2)} KB per turn` : 'no turns'})
rss          before ${mb(before.rss)}, after ${mb(after.rss)}, after ${settleSeconds} s ${mb(settled.rss)}
held         ${settled.threads} threads, ${settled.executions} executions, request log ${settled.requestLog}, recording log ${settled.recordingLog}
without them heap ${mb(forgotten.heapUsed)}, rss ${mb(forgotten.rss)}, once the threads, executions and runs are dropped (what else is held)
`)
