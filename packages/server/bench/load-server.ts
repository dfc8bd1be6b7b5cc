/**
 * The server half of the load benchmark (`load.ts` forks it): the Node host in a process of its
 * own, so that the load clients do not share its event loop, and so that its memory is its own.
 * It answers `{ type: 'measure' }` with its memory after two full collections (when Node runs with
 * --expose-gc) and the sizes of what it keeps. `{ type: 'forget' }` first drops the recorded threads,
 * executions and runs: what is left above the start then is held by something else (a leak).
 */
import { startPreviewChatServer } from '../src/node/host'
import { createMemoryStore } from '../src/store/memory'
import type { Sleep } from '../src/sleep'

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
  /** The turns this main runs now, and how many of them still have a reader. */
  running: number
  listened: number
  /** The bytes the running turns' live streams hold for their readers, all together. */
  unreadBytes: number
  /** The characters of text and reasoning recorded in every thread: what a turn is meant to keep. */
  recordedChars: number
}

const deltaMs = Number(process.env.LOAD_DELTA_MS ?? 40)
const snapshotMs = Number(process.env.LOAD_SNAPSHOT_MS ?? 250)
/**
 * `LOAD_PAUSE=immediate`: the agent's pauses only yield to the event loop (as fast as the CPU
 * allows, a fast model), instead of a timer of `deltaMs` (at 0, a timer still waits 1 ms or more).
 */
const immediate: Sleep = (_ms, signal) =>
  new Promise((resolve, reject) =>
    setImmediate(() => (signal.aborted ? reject(signal.reason as Error) : resolve())),
  )
const store = createMemoryStore()
const server = await startPreviewChatServer({
  dev: true,
  store,
  port: 0,
  host: '127.0.0.1',
  deltaMs,
  snapshotMs,
  ...(process.env.LOAD_PAUSE === 'immediate' && { sleep: immediate }),
})
const gc = (globalThis as { gc?: () => void }).gc

process.on('message', (message: { type: string }) => {
  if (message.type === 'forget') {
    store.importState({ threads: [], executions: [], runs: [], messageIds: [] })
  }
  if (message.type === 'measure' || message.type === 'forget') {
    gc?.()
    gc?.()
    const { heapUsed, rss } = process.memoryUsage()
    const { user, system } = process.cpuUsage()
    const { inspect } = server.backend
    const { threads, executions } = store.exportState()
    const running = inspect.running()
    let recordedChars = 0
    for (const [, thread] of threads) {
      for (const message of thread.messages) {
        for (const part of message.content) {
          if (part.type === 'text' || part.type === 'reasoning') recordedChars += part.text.length
        }
      }
    }
    const answer: ServerMeasure = {
      type: 'measure',
      heapUsed,
      rss,
      cpu: user + system,
      threads: threads.length,
      executions: executions.length,
      requestLog: inspect.requests.length,
      recordingLog: inspect.recordings.length,
      running: running.length,
      listened: running.filter((id) => inspect.hasListener(id)).length,
      unreadBytes: running.reduce((sum, id) => sum + (inspect.unreadBytes(id) ?? 0), 0),
      recordedChars,
    }
    process.send?.(answer)
  } else if (message.type === 'close') {
    void server.close().then(() => process.exit(0))
  }
})
process.send?.({ type: 'ready', url: server.url })
