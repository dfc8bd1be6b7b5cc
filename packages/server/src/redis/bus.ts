import { randomUUID } from 'node:crypto'
import type { PreviewChatBus } from '../bus/types'
import { openConnections, type RedisConnections } from './connections'
import { parseEnvelope } from './envelope'
import { unavailable } from './errors'
import { createPushFanout } from './fanout'
import { redisLayout } from './layout'
import type { RedisBusLogger } from './log'
import { createStopRelay } from './relay'

/** The options of `createRedisBus`. */
export interface RedisBusOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). */
  url: string
  /** Put before every channel and key (default `preview-chat:`), so deployments can share a Redis. */
  channelPrefix?: string
  /**
   * How long a relayed Stop waits for its answer, and the bound of the first connection and of each
   * Redis command (default 5000 ms). Past it the Stop rejects with `relay_timeout`.
   */
  replyTimeoutMs?: number
  /**
   * How long Redis keeps a relayed Stop for its owner (default 300 000 ms, the platform's 5
   * minutes), in case the owner's subscription missed it; Redis expires it by itself.
   */
  pendingStopTtlMs?: number
  /** Hears what the bus reports: Redis away and back, junk dropped, a handler that threw. */
  logger?: RedisBusLogger
}

/** The Redis bus: a `PreviewChatBus` across processes, and what it holds. */
export interface RedisBus extends PreviewChatBus {
  /** This instance's id (each `createRedisBus` is one instance, whatever mains it registers). */
  readonly instanceId: string
  /** How many messages read from Redis were dropped as junk (never trusted, never thrown). */
  junkCount(): number
  /** Disconnects; Stops still waiting reject with `bus_unavailable`. */
  close(): Promise<void>
}

const defaults = { channelPrefix: 'preview-chat:', replyTimeoutMs: 5000, pendingStopTtlMs: 300_000 }

/**
 * A `PreviewChatBus` over Redis pub/sub, for several processes (mains) of one deployment:
 * push messages published on any instance reach the user's subscribers on every instance, and a
 * Stop reaches the instance that registered the owner main, whose answer comes back (see
 * `createStopRelay` for how, and `redisLayout` for the channels and keys). While Redis is away,
 * `publish` and a relayed `cancel` reject with a typed, retryable `RedisBusError`
 * (`bus_unavailable`, or `relay_timeout` when no answer came in time); once Redis is back the
 * subscriptions are restored by the client and the bus works again. Resolves once both
 * connections are up and subscribed; rejects with `bus_unavailable` when Redis cannot be reached
 * within `replyTimeoutMs`.
 *
 * The client is `ioredis`: it restores a connection's subscriptions by itself after a reconnect
 * (`autoResubscribe`), can refuse commands at once while disconnected instead of queueing them
 * (`enableOfflineQueue: false`, `maxRetriesPerRequest: 0`), bounds each command
 * (`commandTimeout`), and has few dependencies; node-redis serves as well for pub/sub, but ioredis
 * gives those three as plain options, each one documented and long-standing.
 */
export async function createRedisBus(options: RedisBusOptions): Promise<RedisBus> {
  const settings = checkedOptions(options)
  const logger = options.logger ?? (() => {})
  const instanceId = randomUUID()
  const layout = redisLayout(settings.channelPrefix)
  // Set once connected; nothing reads it before (no message arrives, no method is returned).
  const opened: { connections?: RedisConnections } = {}
  const current = () => {
    if (!opened.connections) throw unavailable('starting', new Error('not connected yet'))
    return opened.connections
  }
  const fanout = createPushFanout({ instanceId, channel: layout.push, connections: current })
  const relay = createStopRelay({ ...settings, instanceId, layout, connections: current, logger })
  let junk = 0

  const onMessage = (channel: string, text: string) => {
    const parsed = parseEnvelope(text)
    const envelope = parsed.ok ? parsed.envelope : undefined
    if (envelope?.kind === 'push' && channel === layout.push) return fanout.onPush(envelope)
    if (envelope?.kind === 'stop' && channel === layout.stop) return relay.onStop(envelope)
    if (envelope?.kind === 'answer' && channel === layout.answer(instanceId)) {
      return relay.onAnswer(envelope)
    }
    junk += 1
    // Logged at the 1st, 2nd, 4th, 8th… so that a flood of junk cannot flood the log.
    if ((junk & (junk - 1)) !== 0) return
    const what = parsed.ok ? `a ${parsed.envelope.kind} on the wrong channel` : parsed.reason
    logger({
      level: 'warn',
      event: 'junk',
      message: `Dropped a message on ${channel}: ${what} (${junk} dropped so far; logged at powers of two).`,
    })
  }
  const onReconnected = () => {
    relay.sweep().catch((cause: unknown) =>
      logger({
        level: 'warn',
        event: 'relay_failed',
        message: `The Stops remembered for this instance could not be read: ${String(cause)}`,
      }),
    )
  }

  opened.connections = await openConnections({
    url: settings.url,
    channels: [layout.push, layout.stop, layout.answer(instanceId)],
    timeoutMs: settings.replyTimeoutMs,
    logger,
    onMessage,
    onReconnected,
  })
  return {
    instanceId,
    publish: fanout.publish,
    subscribe: fanout.subscribe,
    register: relay.register,
    cancel: relay.cancel,
    junkCount: () => junk,
    close() {
      relay.close()
      current().close()
      return Promise.resolve()
    },
  }
}

function checkedOptions(options: RedisBusOptions) {
  const settings = { ...defaults, ...options }
  if (typeof settings.url !== 'string' || !/^rediss?:\/\//.test(settings.url)) {
    throw new TypeError('createRedisBus: `url` must be a redis:// or rediss:// URL.')
  }
  for (const name of ['replyTimeoutMs', 'pendingStopTtlMs'] as const) {
    const value = settings[name]
    if (!Number.isInteger(value) || value <= 0) {
      throw new RangeError(`createRedisBus: \`${name}\` must be a positive whole number of ms.`)
    }
  }
  return settings
}
