/**
 * The server half of the load benchmark (`load.ts` forks it): the Node host in a process of its
 * own, so that the load clients do not share its event loop, and so that its memory is its own.
 * It answers `{ type: 'measure' }` with its memory after two full collections (when Node runs with
 * --expose-gc) and the sizes of what it keeps. `{ type: 'forget' }` first drops the recorded threads,
 * executions and runs: what is left above the start then is held by something else (a leak).
 */
import { startPreviewChatServer } from '../src/node/host'

export interface ServerMeasure {
  type: 'measure'
  heapUsed: number
  rss: number
  /** The server's CPU time so far (user + system), in µs. */
  cpu: number
  threads: number
  executions: number
  requestLog: number
  recordingLog: number
}

const deltaMs = Number(process.env.LOAD_DELTA_MS ?? 40)
const snapshotMs = Number(process.env.LOAD_SNAPSHOT_MS ?? 250)
const server = await startPreviewChatServer({ port: 0, host: '127.0.0.1', deltaMs, snapshotMs })
const gc = (globalThis as { gc?: () => void }).gc

process.on('message', (message: { type: string }) => {
  if (message.type === 'forget') {
    const { store } = server.backend
    store.threads.clear()
    store.executions.clear()
    store.runs.clear()
  }
  if (message.type === 'measure' || message.type === 'forget') {
    gc?.()
    gc?.()
    const { heapUsed, rss } = process.memoryUsage()
    const { user, system } = process.cpuUsage()
    const { inspect, store } = server.backend
    const answer: ServerMeasure = {
      type: 'measure',
      heapUsed,
      rss,
      cpu: user + system,
      threads: store.threads.size,
      executions: store.executions.size,
      requestLog: inspect.requests.length,
      recordingLog: inspect.recordings.length,
    }
    process.send?.(answer)
  } else if (message.type === 'close') {
    void server.close().then(() => process.exit(0))
  }
})
process.send?.({ type: 'ready', url: server.url })
