import { Redis, type RedisOptions } from 'ioredis'
import { unavailable } from './errors'
import type { RedisBusLogger } from './log'

/**
 * The two connections of one instance. `commands` sends PUBLISH, SET and SCAN and rejects at once
 * while Redis is away (no offline queue, no retry of a command the connection lost): the bus turns
 * that into a typed error rather than waiting or queueing a Stop for later. `subscriber` holds the
 * instance's subscriptions, and ioredis subscribes them again by itself after each reconnect
 * (`autoResubscribe`), so nothing is subscribed twice and nothing is left out.
 */
export interface RedisConnections {
  readonly commands: Redis
  readonly subscriber: Redis
  /** Both connections are up (the subscriber's resubscription sent). */
  ready(): boolean
  close(): void
}

/** How long to wait before reconnect attempt `times`: soon at first, then each second. */
const retryStrategy = (times: number) => Math.min(50 * times, 1000)

export interface ConnectOptions {
  url: string
  channels: string[]
  /** Bounds the first connection, and each command (a Redis that hangs counts as down). */
  timeoutMs: number
  logger: RedisBusLogger
  onMessage(channel: string, text: string): void
  /** Called when both connections are up again after Redis was away, the subscriptions restored. */
  onReconnected(): void
}

/** Opens both connections and subscribes `channels`; rejects with `bus_unavailable` in time. */
export async function openConnections(options: ConnectOptions): Promise<RedisConnections> {
  const base: RedisOptions = { lazyConnect: true, retryStrategy, connectTimeout: options.timeoutMs }
  const commands = new Redis(options.url, {
    ...base,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.timeoutMs,
  })
  const subscriber = new Redis(options.url, {
    ...base,
    autoResubscribe: true,
    maxRetriesPerRequest: null,
  })
  let closed = false
  const connections: RedisConnections = {
    commands,
    subscriber,
    ready: () => commands.status === 'ready' && subscriber.status === 'ready',
    close() {
      closed = true
      commands.disconnect()
      subscriber.disconnect()
    },
  }
  watch(connections, options, () => closed)
  subscriber.on('message', options.onMessage)
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no connection within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    )
  })
  try {
    await Promise.race([
      Promise.all([commands.connect(), subscriber.connect()]).then(() =>
        subscriber.subscribe(...options.channels),
      ),
      timeout,
    ])
    return connections
  } catch (cause) {
    connections.close()
    throw unavailable(`connecting to ${redactedUrl(options.url)}`, cause)
  } finally {
    clearTimeout(timer)
  }
}

/** Logs when Redis goes away and comes back (once each, not at every retry). */
function watch(
  connections: RedisConnections,
  options: ConnectOptions,
  closed: () => boolean,
): void {
  let away = false
  let started = false
  const onError = (error: Error) => {
    if (!started || away || closed()) return
    away = true
    options.logger({
      level: 'warn',
      event: 'redis_down',
      message: `Redis is away (${error.message}): push stays on this instance and Stops to other instances fail with bus_unavailable until it is back.`,
    })
  }
  const onReady = () => {
    if (!connections.ready()) return
    if (!started) {
      started = true
      return
    }
    if (away) {
      away = false
      options.logger({ level: 'info', event: 'redis_up', message: 'Redis is back.' })
    }
    void resubscribed(connections.subscriber).then(options.onReconnected, (error: unknown) =>
      options.logger({
        level: 'warn',
        event: 'redis_down',
        message: `The subscriptions could not be confirmed after a reconnect: ${String(error)}`,
      }),
    )
  }
  for (const connection of [connections.commands, connections.subscriber]) {
    connection.on('error', onError)
    connection.on('close', () => onError(new Error('connection closed')))
    connection.on('ready', onReady)
  }
}

/**
 * Resolves once the subscriber's subscriptions are restored: 'ready' is emitted before ioredis
 * sends them, so wait a turn for them to be written, then for a PING behind them to come back.
 */
async function resubscribed(subscriber: Redis): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  await subscriber.ping()
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'the Redis URL'
  }
}
