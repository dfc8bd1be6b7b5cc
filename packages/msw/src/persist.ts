/**
 * The mocked backend kept across page loads. In a browser the msw handlers run in the page, so a
 * reload ends the backend with the page: its threads are gone and a running turn dies with it,
 * which is not what a real server does. `createPersistentPreviewChat` keeps the backend in a
 * `Storage` (the page's `sessionStorage`): `save()` writes its threads, executions and suspended
 * runs, with how far each running turn had got; the next page's call restores them, and posts a
 * turn that was running again through the backend, held until it has made as many steps as
 * before, then let run on. The scripted agent is deterministic, so the restored answer is the one
 * the page showed, and it goes on growing.
 */
import type {
  ExecutionRecord,
  MemoryStore,
  MemoryStoreState,
  RunRecord,
  ThreadRecord,
} from '@preview-chat/server'
import { createMemoryStore, scriptedAgent, type PreviewChatAgent } from '@preview-chat/server'
import {
  createPreviewChatHandlers,
  type PreviewChatHandlersOptions,
  type PreviewChatMock,
} from './handlers'

/** Where the backend is kept: `sessionStorage`, `localStorage`, or a stand-in in tests. */
export interface PreviewChatStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/** Options of `createPersistentPreviewChat`: the mock's, and where it is kept. */
export interface PersistentPreviewChatOptions extends PreviewChatHandlersOptions {
  storage: PreviewChatStorage
  /** The storage key, `preview-chat-msw` by default. */
  key?: string
}

/** The mock, with `save()`: writes the backend to the storage (call it on `pagehide`). */
export interface PersistentPreviewChatMock extends PreviewChatMock {
  save(): void
  /** Forgets what the storage holds (the next page starts with an empty backend). */
  forget(): void
}

/** A running turn as saved: its message, and how many pauses its agent had made. */
interface SavedTurn {
  threadKey: string
  user: string
  projectId: string
  agentId: string
  threadId: string
  message: string
  steps: number
}

interface Saved {
  version: 1
  threads: [string, ThreadRecord][]
  executions: [string, ExecutionRecord][]
  runs: [string, RunRecord][]
  messageIds: string[]
  running: SavedTurn[]
}

/** A message's turn that an agent runs now, and how many pauses it made so far. */
interface CountedTurn {
  executionId: string
  message: string
  steps: number
}

/**
 * The msw kit's mock (`createPreviewChatHandlers`), restored from `storage` and saved to it by
 * `save()`. Resolves once a turn that was running when the last page saved runs again, as far as
 * it had got: mount the handlers after that.
 *
 * @example
 * const mock = await createPersistentPreviewChat({ storage: sessionStorage, user: 'alice' })
 * addEventListener('pagehide', () => mock.save())
 */
export async function createPersistentPreviewChat(
  options: PersistentPreviewChatOptions,
): Promise<PersistentPreviewChatMock> {
  const { storage, key = 'preview-chat-msw', ...mockOptions } = options
  const inner = mockOptions.agent ?? scriptedAgent
  const turns: CountedTurn[] = []
  // A memory store, which can be written out and read back at once (a page's `pagehide` waits
  // for nothing).
  const store = createMemoryStore()
  // Counts each message turn's pauses; its execution is the newest running one not yet counted
  // (the backend records the execution before its agent starts).
  const agent: PreviewChatAgent = async (input, context) => {
    if (input.kind !== 'message') return inner(input, context)
    const counted = new Set(turns.map((turn) => turn.executionId))
    const execution = store
      .exportState()
      .executions.map(([, each]) => each)
      .reverse()
      .find((each) => each.status === 'running' && !counted.has(each.id))
    if (!execution) return inner(input, context)
    const turn: CountedTurn = { executionId: execution.id, message: input.message, steps: 0 }
    turns.push(turn)
    try {
      return await inner(input, {
        ...context,
        pause: () => {
          turn.steps++
          return context.pause()
        },
      })
    } finally {
      turns.splice(turns.indexOf(turn), 1)
    }
  }
  // The agent runs only once a turn starts, after `mock` is made.
  const mock: PreviewChatMock = createPreviewChatHandlers({ ...mockOptions, agent, store })

  const saved = parse(storage.getItem(key))
  if (saved) await restore(store, saved, mock, turns)

  const save = () => {
    const state = store.exportState()
    const running: SavedTurn[] = []
    for (const [threadKey, thread] of state.threads) {
      const turn = turns.find((each) => each.executionId === thread.activeExecutionId)
      if (!turn) continue
      running.push({
        threadKey,
        user: thread.ownerId,
        projectId: thread.projectId,
        agentId: thread.agentId,
        threadId: thread.id,
        message: turn.message,
        steps: turn.steps,
      })
    }
    const value: Saved = {
      version: 1,
      threads: state.threads,
      executions: state.executions,
      runs: state.runs,
      messageIds: state.messageIds,
      running,
    }
    storage.setItem(key, JSON.stringify(value))
  }

  return Object.assign(mock, { save, forget: () => storage.removeItem(key) })
}

/**
 * Puts the saved backend back: a turn that was running is posted again (its message and what
 * followed it leave the record first), held until it has made as many steps as before.
 */
async function restore(
  store: MemoryStore,
  saved: Saved,
  mock: PreviewChatMock,
  turns: readonly CountedTurn[],
): Promise<void> {
  const threads = new Map(saved.threads)
  const executions = new Map(saved.executions)
  const again = saved.running.filter((turn) => {
    const thread = threads.get(turn.threadKey)
    if (!thread?.activeExecutionId) return false
    executions.delete(thread.activeExecutionId)
    const from = thread.messages.findLastIndex((message) => message.role === 'user')
    thread.messages = from < 0 ? thread.messages : thread.messages.slice(0, from)
    thread.activeExecutionId = null
    if (thread.messages.length === 0) threads.delete(turn.threadKey)
    return true
  })
  store.importState({
    threads: [...threads],
    executions: [...executions],
    runs: saved.runs,
    messageIds: saved.messageIds,
  })
  for (const turn of again) {
    const seeded = await mock.seed.runningTurn({
      user: turn.user,
      projectId: turn.projectId,
      agentId: turn.agentId,
      threadId: turn.threadId,
      message: turn.message,
      // Held at the first pause, then as many more as the last page's turn had made.
      steps: Math.max(0, turn.steps - 1),
    })
    seeded.turn.release()
  }
  // A turn whose agent this page cannot run again (a resume): it ended with its page.
  const state: MemoryStoreState = store.exportState()
  const byId = new Map(state.executions)
  for (const [, thread] of state.threads) {
    const execution = thread.activeExecutionId ? byId.get(thread.activeExecutionId) : undefined
    if (execution && !turns.some((turn) => turn.executionId === execution.id)) {
      execution.status = 'interrupted'
      thread.activeExecutionId = null
    }
  }
  store.importState(state)
}

/** What the storage holds, or nothing when it holds no saved backend of this version. */
function parse(text: string | null): Saved | undefined {
  if (!text) return undefined
  try {
    const value = JSON.parse(text) as Partial<Saved>
    return value.version === 1 ? (value as Saved) : undefined
  } catch {
    return undefined
  }
}
