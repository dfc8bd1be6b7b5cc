import { randomUUID } from 'node:crypto'
import type { CancelHandler } from '../bus/types'
import type { RedisConnections } from './connections'
import { encodeEnvelope, type Envelope } from './envelope'
import { RedisBusError, unavailable } from './errors'
import type { RedisLayout } from './layout'
import type { RedisBusLogger } from './log'

type StopEnvelope = Extract<Envelope, { kind: 'stop' }>
type AnswerEnvelope = Extract<Envelope, { kind: 'answer' }>

export interface StopRelayOptions {
  instanceId: string
  layout: RedisLayout
  connections: () => RedisConnections
  replyTimeoutMs: number
  pendingStopTtlMs: number
  logger: RedisBusLogger
}

/** A relayed Stop waiting for its answers: the owner's, or a "not mine" from every receiver. */
interface Waiting {
  settle(accepted: boolean): void
  fail(error: RedisBusError): void
  /** How many instances received the Stop (PUBLISH's count), once known. */
  receivers?: number
  notMine: number
}

/**
 * The Stop relay over Redis. A Stop for a main of this instance runs its handler directly; any
 * other is remembered under its execution id (a key Redis expires after `pendingStopTtlMs`) and
 * published on the stop channel, which every instance hears. Each instance answers on the
 * caller's answer channel: the one holding the main's handler with the handler's answer, the
 * others "not mine". The caller resolves with the owner's answer, with `false` once every receiver
 * said "not mine" (no instance has that main), and rejects with `relay_timeout` when neither came
 * within `replyTimeoutMs`. Each Stop has its own correlation id: two quick Stops are two requests,
 * both answered.
 */
export function createStopRelay(options: StopRelayOptions) {
  const { instanceId, layout, logger } = options
  const handlers = new Map<string, CancelHandler>()
  const waiting = new Map<string, Waiting>()

  const answer = async (stop: StopEnvelope) => {
    const handler = handlers.get(stop.mainId)
    const accepted = handler ? await runHandler(handler, stop.executionId, logger) : false
    const reply: AnswerEnvelope = { v: 1, kind: 'answer', id: stop.id, owner: !!handler, accepted }
    try {
      const commands = options.connections().commands
      // An accepted Stop has landed: it need not be remembered any more (one round trip).
      const pipeline = commands
        .pipeline()
        .publish(layout.answer(stop.replyTo), encodeEnvelope(reply))
      if (accepted) pipeline.del(layout.pendingStop(stop.mainId, stop.executionId))
      const failed = (await pipeline.exec())?.find(([error]) => error)?.[0]
      if (failed) throw failed
    } catch (cause) {
      // The caller's wait ends in relay_timeout: it never takes silence for an answer.
      logger({
        level: 'warn',
        event: 'relay_failed',
        message: `The answer to a Stop could not be sent: ${String(cause)}`,
        executionId: stop.executionId,
      })
    }
  }

  return {
    register(mainId: string, cancel: CancelHandler): () => void {
      handlers.set(mainId, cancel)
      return () => {
        if (handlers.get(mainId) === cancel) handlers.delete(mainId)
      }
    },

    async cancel(mainId: string, executionId: string): Promise<boolean> {
      const local = handlers.get(mainId)
      if (local) return (await local(executionId)) === true
      const connections = options.connections()
      if (!connections.ready()) {
        throw unavailable('relaying a Stop', new Error('the connection is not ready'))
      }
      const id = randomUUID()
      const stop: StopEnvelope = {
        v: 1,
        kind: 'stop',
        id,
        mainId,
        executionId,
        replyTo: instanceId,
      }
      const answered = awaitAnswer(waiting, id, options.replyTimeoutMs, mainId, executionId)
      try {
        // Remembered before it is published: an owner that misses the message (its subscription
        // was being restored) finds it when it sweeps. One round trip, as a transaction.
        const results = await connections.commands
          .multi()
          .set(layout.pendingStop(mainId, executionId), '1', 'PX', options.pendingStopTtlMs)
          .publish(layout.stop, encodeEnvelope(stop))
          .exec()
        const failed = results?.find(([error]) => error)?.[0]
        if (!results || failed) throw failed ?? new Error('the transaction was discarded')
        received(waiting, id, Number(results[1]?.[1]))
      } catch (cause) {
        waiting.get(id)?.fail(unavailable('relaying a Stop', cause))
      }
      return answered
    },

    /** Every instance hears every Stop, and answers it. */
    onStop(stop: StopEnvelope): void {
      void answer(stop)
    },

    onAnswer(reply: AnswerEnvelope): void {
      const entry = waiting.get(reply.id)
      // A late answer (after a timeout) or a second owner's: the first decided.
      if (!entry) return
      if (reply.owner) return entry.settle(reply.accepted)
      entry.notMine += 1
      if (entry.receivers !== undefined && entry.notMine >= entry.receivers) entry.settle(false)
    },

    /**
     * After a reconnect: runs the Stops remembered for this instance's mains, which may have been
     * published while its subscription was being restored. Keyed by execution id, each can only
     * ever reach the execution it names; the handler decides (false for one not running).
     */
    async sweep(): Promise<void> {
      for (const [mainId, handler] of handlers) {
        const keys = await scanAll(options.connections(), layout.pendingStops(mainId))
        const prefix = layout.pendingStop(mainId, '')
        for (const key of keys) {
          const accepted = await runHandler(handler, key.slice(prefix.length), logger)
          if (accepted) await options.connections().commands.del(key)
        }
      }
    },

    /** Rejects every Stop still waiting (the bus is closing). */
    close(): void {
      for (const entry of waiting.values()) {
        entry.fail(unavailable('relaying a Stop', new Error('the bus was closed')))
      }
    },
  }
}

/** A main's handler, whose throw is an answer of "not accepted" (logged), never the bus's crash. */
async function runHandler(
  handler: CancelHandler,
  executionId: string,
  logger: RedisBusLogger,
): Promise<boolean> {
  try {
    return (await handler(executionId)) === true
  } catch (error) {
    logger({
      level: 'error',
      event: 'cancel_failed',
      message: `A cancel handler threw: ${error instanceof Error ? error.message : String(error)}`,
      executionId,
    })
    return false
  }
}

function awaitAnswer(
  waiting: Map<string, Waiting>,
  id: string,
  timeoutMs: number,
  mainId: string,
  executionId: string,
): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => {
      entry.fail(
        new RedisBusError(
          'relay_timeout',
          `Main "${mainId}" did not answer the Stop of execution "${executionId}" within ${timeoutMs} ms. Retry, or read the execution's record.`,
        ),
      )
    }, timeoutMs)
    const done = () => {
      clearTimeout(timer)
      waiting.delete(id)
    }
    const entry: Waiting = {
      notMine: 0,
      settle: (accepted) => (done(), resolve(accepted)),
      fail: (error) => (done(), reject(error)),
    }
    waiting.set(id, entry)
  })
}

/** PUBLISH's count is known: every receiver may have said "not mine" already. */
function received(waiting: Map<string, Waiting>, id: string, receivers: number): void {
  const entry = waiting.get(id)
  if (!entry) return
  entry.receivers = receivers
  if (entry.notMine >= receivers) entry.settle(false)
}

/** Every key matching `pattern` (SCAN, so Redis is never blocked by a KEYS). */
async function scanAll(connections: RedisConnections, pattern: string): Promise<string[]> {
  const keys: string[] = []
  let cursor = '0'
  do {
    const [next, batch] = await connections.commands.scan(cursor, 'MATCH', pattern, 'COUNT', 200)
    keys.push(...batch)
    cursor = next
  } while (cursor !== '0')
  return keys
}
