/**
 * `pnpm --filter @preview-chat/server bench:unread [--connections 20] [--deltas 100000]
 * [--seconds 30] [--every 3] [--pause timer|immediate]`
 *
 * Issue 27, row k: `connections` clients each post `/long <deltas>` to a server run with
 * `--delta-ms 0` and never read their turn stream (each reads the first bytes, then stops reading
 * its socket). The server runs in a child process with --expose-gc (`load-server.ts`); every
 * `every` seconds this prints its memory after full collections, the turns it runs and how many
 * still have a reader, what their streams hold unread, and the text recorded so far (which a turn
 * is meant to keep: it survives its connection). `--pause immediate` has the agent's pauses only
 * yield (a model as fast as the CPU), so that a stream outgrows what the kernel buffers for a
 * socket nobody reads (some 3 MB on loopback) within the run. Loopback only; it stops by itself after
 * `seconds` (at most 120), closing the clients and the server. It measures and asserts nothing;
 * no test runs it.
 */
import { connect, type Socket } from 'node:net'
import { parseArgs } from 'node:util'
import type { ServerMeasure } from './load-server'
import { startServerProcess } from './server-process'

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '20' },
    deltas: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '30' },
    every: { type: 'string', default: '3' },
    pause: { type: 'string', default: 'timer' },
  },
})
const connections = Math.min(200, Math.max(1, Number(values.connections)))
const deltas = Math.max(1, Number(values.deltas))
const seconds = Math.min(120, Math.max(1, Number(values.seconds)))
const everyMs = Math.max(1, Number(values.every)) * 1000
// Whatever happens, the run ends: a bound on the whole, past the load and its last measures.
setTimeout(
  () => {
    console.error('unread-turns: did not finish in time, stopping')
    process.exit(1)
  },
  (seconds + 60) * 1000,
).unref()

const server = startServerProcess({
  LOAD_DELTA_MS: '0',
  LOAD_SNAPSHOT_MS: '250',
  LOAD_PAUSE: values.pause,
})
const measure = server.measure

/** One client: posts the turn, reads the first bytes of the answer, then never reads again. */
function unreadTurn(port: number, index: number): Promise<Socket> {
  const body = JSON.stringify({
    message: `/long ${deltas}`,
    sessionId: `unread-${index}`,
    newSession: true,
  })
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => undefined)
  socket.write(
    `POST /rest/projects/bench/agents/v2/agent/chat HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer alice\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
  return new Promise((resolve) =>
    socket.once('data', () => {
      socket.pause()
      resolve(socket)
    }),
  )
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`.padStart(9)
const row = (at: string, m: ServerMeasure) =>
  console.log(
    `${at.padStart(6)}  heap ${mb(m.heapUsed)}  rss ${mb(m.rss)}  running ${String(m.running).padStart(3)} (with a reader ${String(m.listened).padStart(3)})  unread ${mb(m.unreadBytes)}  recorded ${(m.recordedChars / 1e6).toFixed(2)} M chars  cpu ${(m.cpu / 1e6).toFixed(1)} s`,
  )

const url = await server.ready()
const port = Number(new URL(url).port)
console.log(
  `unread-turns: ${connections} connections, /long ${deltas}, --delta-ms 0, pauses ${values.pause}, ${seconds} s (Node ${process.version})`,
)
row('start', await measure())
const started = Date.now()
const sockets = await Promise.all(
  Array.from({ length: connections }, (_, i) => unreadTurn(port, i)),
)
while (Date.now() - started < seconds * 1000) {
  await new Promise((resolve) =>
    setTimeout(resolve, Math.min(everyMs, seconds * 1000 - (Date.now() - started))),
  )
  row(`${Math.round((Date.now() - started) / 1000)} s`, await measure())
}
for (const socket of sockets) socket.destroy()
await server.close()
process.exit(0)
