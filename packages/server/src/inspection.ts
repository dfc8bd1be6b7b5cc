import type { HistorySnapshot } from '@preview-chat/core/contract'
import type { RunningExecution } from './execution/types'
import type { RouteName } from './routes/match'
import type { MemoryStoreState } from './store/memory'
import { snapshotOf } from './store/snapshot'
import type { ExecutionRecord, PreviewChatStore, ThreadRecord } from './store/types'

/** One handled request, for tests: e.g. "exactly one POST reached the chat route". */
export interface RequestLogEntry {
  method: string
  path: string
  route: RouteName | 'unknown'
  userId: string | undefined
  status: number
}

/** One recorded snapshot (each one was announced to the owner's tabs). */
export interface RecordingLogEntry {
  executionId: string
  status: ExecutionRecord['status']
}

/**
 * Read-only views for tests; not part of the wire contract. `threads`, `history` and `executions`
 * read the in-memory store (the default, `createMemoryStore()`) at once; with another store they
 * throw: read that store (`listThreads`, `readThread`, `listExecutions`) instead.
 */
export interface PreviewChatInspection {
  /** Every thread of the store (all mains), as copies. */
  threads(): ThreadRecord[]
  /**
   * The history snapshot of a thread, as its owner would read it. Thread ids are scoped to their
   * owner: name `ownerId` when two users may have used the same id (the first one found otherwise).
   */
  history(threadId: string, ownerId?: string): HistorySnapshot | undefined
  /** Every execution of the store (all mains), as copies. */
  executions(): ExecutionRecord[]
  /** How many push connections (SSE or WebSocket) of `userId` this main holds open. */
  pushConnections(userId: string): number
  /** The ids of the executions this main runs now. */
  running(): string[]
  /** Whether a running execution of this main still has a client reading its live stream. */
  hasListener(executionId: string): boolean
  /**
   * The bytes of a running execution's live stream that wait for its reader (at most
   * `turnQueueLimitBytes`: past it the reader is dropped, and this is 0).
   */
  unreadBytes(executionId: string): number | undefined
  /** The latest snapshots this main recorded (up to `logLimit`), in order. */
  readonly recordings: readonly RecordingLogEntry[]
  /** The latest requests this main handled (up to `logLimit`), in order. */
  readonly requests: readonly RequestLogEntry[]
  /** How many requests this main handled, all of them (not only those `requests` still holds). */
  countRequests(filter: { route?: RouteName | 'unknown'; method?: string }): number
}

/** The logs behind `inspect`: what a main handled and recorded, the latest `limit` of each. */
export interface InspectionLog {
  readonly inspection: PreviewChatInspection
  request(entry: RequestLogEntry): void
  recorded(entry: RecordingLogEntry): void
}

/** The memory store's contents, read at once; another store cannot be (see `PreviewChatInspection`). */
function memoryState(store: PreviewChatStore): MemoryStoreState {
  if ('exportState' in store && typeof store.exportState === 'function') {
    return (store.exportState as () => MemoryStoreState)()
  }
  throw new Error(
    'backend.inspect reads the in-memory store only; read your store (listThreads, readThread, listExecutions) instead.',
  )
}

export function createInspectionLog(
  store: PreviewChatStore,
  running: ReadonlyMap<string, RunningExecution>,
  pushConnections: (userId: string) => number,
  limit: number,
): InspectionLog {
  const requests: RequestLogEntry[] = []
  const recordings: RecordingLogEntry[] = []
  // Per route and method: few keys, as there are few routes and an HTTP parser knows few methods.
  const counts = new Map<string, { route: RouteName | 'unknown'; method: string; count: number }>()
  const inspection: PreviewChatInspection = {
    threads: () => memoryState(store).threads.map(([, thread]) => thread),
    history: (threadId, ownerId) => {
      for (const [, thread] of memoryState(store).threads) {
        if (thread.id === threadId && (ownerId === undefined || thread.ownerId === ownerId)) {
          return snapshotOf(thread)
        }
      }
      return undefined
    },
    executions: () => memoryState(store).executions.map(([, execution]) => execution),
    pushConnections,
    running: () => [...running.keys()],
    hasListener: (executionId) => {
      const stream = running.get(executionId)?.stream
      return stream !== undefined && !stream.cancelled && !stream.dropped
    },
    unreadBytes: (executionId) => running.get(executionId)?.stream.queuedBytes,
    recordings,
    requests,
    countRequests: ({ route, method }) => {
      let total = 0
      for (const counted of counts.values()) {
        if (route !== undefined && counted.route !== route) continue
        if (method !== undefined && counted.method !== method) continue
        total += counted.count
      }
      return total
    },
  }
  return {
    inspection,
    request(entry) {
      keepLatest(requests, entry, limit)
      const key = `${entry.route} ${entry.method}`
      const counted = counts.get(key)
      if (counted) counted.count++
      else counts.set(key, { route: entry.route, method: entry.method, count: 1 })
    },
    recorded: (entry) => keepLatest(recordings, entry, limit),
  }
}

/** Appends to a log that keeps only its latest `limit` entries. */
function keepLatest<T>(log: T[], entry: T, limit: number): void {
  log.push(entry)
  if (log.length > limit) log.splice(0, log.length - limit)
}
