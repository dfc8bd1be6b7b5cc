import type { ThreadKey } from '@preview-chat/core'
import type { TurnEvent } from '@preview-chat/core/contract'
import {
  applyTurnEvents,
  DEFAULT_DELEGATION_CHAR_LIMIT,
  readTurnStream,
  recordCovers,
  startTurn,
  type LiveTurn,
} from '@preview-chat/core/internal'
import type { PreviewChatBackend } from '@preview-chat/server'
import { createTurnGate, type InternalTurnGate, type TurnGate } from './turnGate'

/** Where a seeded thread lives and whose it is. Every field has a default. */
export interface SeedOptions {
  /** The owner, who posts the turns: the mock's `user`, else `alice`. */
  user?: string
  /** The mock's `projectId` option (`demo-project` by default). */
  projectId?: string
  /** The mock's `agentId` option (`demo-agent` by default). */
  agentId?: string
  /** A fresh UUID by default. */
  threadId?: string
}

/** A thread the seeder put into a state; `key` goes straight into `client.session(key)`. */
export interface SeededThread {
  key: ThreadKey
  /** The owner. */
  user: string
  /** The execution of the last turn posted. */
  executionId: string
}

/** A thread whose turn runs now, held until you step or release it. */
export interface SeededRunningTurn extends SeededThread {
  /** The held turn: `step()` advances it one pause, `release()` lets it run to its end. */
  turn: TurnGate
}

/** A thread whose last turn suspended for approval (`openSuspensions` has it). */
export interface SeededSuspension extends SeededThread {
  runId: string
  toolCallId: string
}

/**
 * Seeding helpers: each one posts as the thread's owner with the backend's own `fetch`, reads the
 * turn stream, and returns once the backend recorded the state it promises. Nothing is written by
 * hand, so a seeded state is always one the contract produces. They use the scripted agent's
 * commands (`/suspend`, `/delegate N`); seed before the client under test starts posting.
 */
export interface Seeder {
  /** A thread with finished turns, one per message (`['Hello']` by default). */
  thread(options?: SeedOptions & { messages?: string[] }): Promise<SeededThread>
  /**
   * A thread with a running turn (`activeExecutionId` set), held at its first pause, or after
   * `steps` more (the record then shows the output of those steps). Holds only this turn.
   */
  runningTurn(
    options?: SeedOptions & { message?: string; steps?: number },
  ): Promise<SeededRunningTurn>
  /** A thread whose turn suspended on a `request_approval` tool call (scripted `/suspend`). */
  suspension(options?: SeedOptions): Promise<SeededSuspension>
  /**
   * A thread whose delegation streamed `chars` child characters (5,000 by default) beyond the
   * 4,000 budget, so its recorded `childTrace` is truncated (scripted `/delegate N`).
   */
  truncatedDelegation(options?: SeedOptions & { chars?: number }): Promise<SeededThread>
}

/** @internal How the next turn's pauses run: through its own gate, held or free-running. */
export interface TurnMode {
  gate: InternalTurnGate
}

/** @internal */
export interface SeederContext {
  backend: PreviewChatBackend
  basePath: string
  defaultUser(): string
  /** Where seeded threads live unless a seeder names it. */
  projectId: string
  agentId: string
  /** The next agent that starts is the seeder's: run its pauses through `mode`. */
  startTurn(mode: TurnMode): void
}

interface Posted {
  executionId: string
  events: TurnEvent[]
}

/**
 * Reads a turn stream with the client's reader (`readTurnStream`) up to its terminal event, handing
 * `onEvents` each network chunk's events; what follows the terminal event is read and ignored
 * until the backend closes the stream, as the client does.
 */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  onEvents: (events: TurnEvent[]) => void,
): Promise<TurnEvent[]> {
  const events: TurnEvent[] = []
  await readTurnStream(
    body,
    (batch) => {
      events.push(...batch)
      onEvents(batch)
    },
    // Never aborted: a seeded turn is read to its end.
    new AbortController().signal,
  )
  return events
}

export function createSeeder(context: SeederContext): Seeder {
  const { backend, basePath } = context

  const resolve = (options: SeedOptions = {}) => ({
    user: options.user ?? context.defaultUser(),
    key: {
      projectId: options.projectId ?? context.projectId,
      agentId: options.agentId ?? context.agentId,
      threadId: options.threadId ?? crypto.randomUUID(),
    },
  })

  const post = async (
    user: string,
    key: ThreadKey,
    message: string,
    mode: TurnMode,
    onEvents?: (events: TurnEvent[], executionId: string) => void,
  ): Promise<Posted> => {
    const enc = encodeURIComponent
    const url = `http://seed.invalid${basePath}/projects/${enc(key.projectId)}/agents/v2/${enc(key.agentId)}/chat`
    // New for this user: thread ids are scoped to their owner, project and agent.
    const isNew = !backend.inspect
      .threads()
      .some(
        (thread) =>
          thread.id === key.threadId &&
          thread.ownerId === user &&
          thread.projectId === key.projectId &&
          thread.agentId === key.agentId,
      )
    // A flavor without `execution-started` (n8n-2.41) names the execution only at its end: the
    // backend's record of the execution this post started names it from the first event on.
    const before = new Set(backend.inspect.executions().map((execution) => execution.id))
    const started = () =>
      backend.inspect
        .executions()
        .find((execution) => !before.has(execution.id) && execution.threadId === key.threadId)?.id
    let executionId: string | undefined
    context.startTurn(mode)
    const response = await backend.fetch(
      new Request(url, {
        method: 'POST',
        headers: {
          ...backend.credentials(user),
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body: JSON.stringify({
          message,
          sessionId: key.threadId,
          ...(isNew && { newSession: true }),
        }),
      }),
    )
    if (!response.ok || !response.body) {
      throw new Error(
        `Seeding failed: posting "${message}" as ${user} answered HTTP ${response.status} (${await response.text()}). Check the user exists and may execute.`,
      )
    }
    const events = await readEvents(response.body, (batch) => {
      // The events from the first one the execution is known at.
      const from = batch.findIndex((event) => {
        executionId ??= event.type === 'execution-started' ? event.executionId : started()
        return executionId !== undefined
      })
      if (executionId !== undefined) onEvents?.(batch.slice(from), executionId)
    })
    if (executionId === undefined) {
      throw new Error(
        `Seeding failed: posting "${message}" as ${user} was refused (${JSON.stringify(events[0])}). Seed a thread whose turn is not running, or use a fresh threadId.`,
      )
    }
    return { executionId, events }
  }

  const free = (): TurnMode => ({ gate: createTurnGate(false) })

  /** Resolves once the record covers what the live stream has shown (checked at each recording). */
  const recordCaughtUp = (
    user: string,
    threadId: string,
    executionId: string,
    liveTurn: () => LiveTurn | undefined,
  ) =>
    new Promise<void>((done) => {
      const covered = () => {
        const history = backend.inspect.history(threadId)
        const live = liveTurn()
        return !history || !live || recordCovers(history, live)
      }
      if (covered()) {
        done()
        return
      }
      const unsubscribe = backend.subscribePush(user, (message) => {
        if (message.data.executionId !== executionId || !covered()) return
        unsubscribe()
        done()
      })
    })

  const finishedTurns = async (user: string, key: ThreadKey, messages: string[]) => {
    let executionId = ''
    for (const message of messages) {
      const posted = await post(user, key, message, free())
      executionId = posted.executionId
    }
    return executionId
  }

  return {
    async thread(options = {}) {
      const { user, key } = resolve(options)
      const executionId = await finishedTurns(user, key, options.messages ?? ['Hello'])
      return { key, user, executionId }
    },

    async runningTurn(options = {}) {
      const { user, key } = resolve(options)
      const gate = createTurnGate(true)
      const message = options.message ?? 'Tell me about the weather'
      // Follow the live stream as a client would, so we know when the record has caught up.
      let live: LiveTurn | undefined
      let started: (executionId: string) => void = () => {}
      const executionStarted = new Promise<string>((done) => (started = done))
      const turnOptions = { delegationCharLimit: DEFAULT_DELEGATION_CHAR_LIMIT, now: Date.now }
      const posting = post(user, key, message, { gate }, (events, executionId) => {
        if (!live) {
          const createdAt = new Date().toISOString()
          live = startTurn({ executionId, sessionId: key.threadId, message, createdAt })
          started(executionId)
        }
        live = applyTurnEvents(live, events, turnOptions)
      })
      const executionId = await Promise.race([
        executionStarted,
        posting.then(({ events }) => {
          throw new Error(
            `Seeding a running turn failed: the turn ended at once (${JSON.stringify(events.at(-1))}).`,
          )
        }),
      ])
      posting.catch(() => {})
      await gate.waitForPause()
      await gate.step(options.steps ?? 0)
      await recordCaughtUp(user, key.threadId, executionId, () => live)
      return { key, user, executionId, turn: gate }
    },

    async suspension(options = {}) {
      const { user, key } = resolve(options)
      const { executionId, events } = await post(user, key, '/suspend', free())
      const last = events[events.length - 1]
      if (last?.type !== 'tool-call-suspended') {
        throw new Error(
          `Seeding a suspension failed: the turn ended with ${JSON.stringify(last)}. It needs the scripted agent (the /suspend command).`,
        )
      }
      return {
        key,
        user,
        executionId,
        runId: last.payload.runId,
        toolCallId: last.payload.toolCallId,
      }
    },

    async truncatedDelegation(options = {}) {
      const { user, key } = resolve(options)
      const chars = options.chars ?? 5000
      const executionId = await finishedTurns(user, key, [`/delegate ${chars}`])
      return { key, user, executionId }
    },
  }
}
