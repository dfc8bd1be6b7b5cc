import type { ServerPushMessage } from '@preview-chat/core/contract'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { startRedis, type TestRedis } from '../../../../scripts/services/redis.mjs'
import {
  createRedisBus,
  RedisBusError,
  redisLayout,
  type RedisBus,
  type RedisBusLogEntry,
  type RedisBusOptions,
} from '../redis'

// What only a bus across processes meets, against a real redis-server of this file's own (these
// tests stop it and cut its connections, which no other file may see).
let redis: TestRedis
let raw: Redis
beforeAll(async () => {
  redis = await startRedis()
  raw = new Redis(redis.url, {
    lazyConnect: true,
    retryStrategy: (times) => Math.min(50 * times, 500),
  })
  raw.on('error', () => {})
  await raw.connect()
}, 180_000) // long enough for a first run that installs redis-server
afterAll(async () => {
  raw.disconnect()
  await redis.stop()
})

const open: RedisBus[] = []
let prefixes = 0
let channelPrefix = ''
/** Buses of one deployment (one prefix per test), closed after the test. */
async function instances(n: number, options: Partial<RedisBusOptions>[] = []): Promise<RedisBus[]> {
  channelPrefix = `faults-${++prefixes}:`
  const buses = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      createRedisBus({ url: redis.url, channelPrefix, ...options[i] }),
    ),
  )
  open.push(...buses)
  return buses
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((bus) => bus.close()))
  await redis.up()
})

const update = (executionId: string): ServerPushMessage => ({
  type: 'agentExecutionUpdated',
  data: { projectId: 'p', agentId: 'a', threadId: 't', executionId },
})
const heardBy = (bus: RedisBus, userId: string) => {
  const heard: string[] = []
  bus.subscribe(userId, (message) => {
    heard.push(message.type === 'agentExecutionUpdated' ? message.data.executionId : message.type)
  })
  return heard
}
const eventually = (check: () => unknown | Promise<unknown>) =>
  vi.waitFor(check, { timeout: 15_000, interval: 20 })

/** The typed, retryable error a call rejected with (fails the test if it resolved). */
async function rejection(promise: Promise<unknown>): Promise<RedisBusError> {
  const error: unknown = await promise.then(
    (value) => new Error(`resolved with ${String(value)}`),
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(RedisBusError)
  expect((error as RedisBusError).retryable).toBe(true)
  return error as RedisBusError
}

describe('the Redis bus while Redis is away and after it returns [R-BUS-REDIS-DOWN]', () => {
  it('rejects a Stop and a publish with bus_unavailable while down; both work after, nothing doubled', async () => {
    const [a, b] = await instances(2)
    a!.register('main-a', (executionId) => executionId.startsWith('running'))
    const heard = heardBy(b!, 'alice')
    await a!.publish('alice', update('before'))
    await eventually(() => expect(heard).toEqual(['before']))

    await redis.down()
    expect((await rejection(b!.cancel('main-a', 'running-1'))).code).toBe('bus_unavailable')
    expect((await rejection(a!.publish('alice', update('while-down')))).code).toBe(
      'bus_unavailable',
    )

    await redis.up()
    // Once the clients have reconnected and resubscribed by themselves, the relay answers again.
    await eventually(async () => expect(await b!.cancel('main-a', 'running-2')).toBe(true))
    expect(await b!.cancel('main-a', 'ended')).toBe(false)
    await a!.publish('alice', update('after-1'))
    await a!.publish('alice', update('after-2'))
    await eventually(() => expect(heard).toEqual(['before', 'after-1', 'after-2']))
    // Nothing doubled by the resubscription: a last message arrives alone after them.
    await a!.publish('alice', update('last'))
    await eventually(() => expect(heard).toEqual(['before', 'after-1', 'after-2', 'last']))
  })

  it('a Stop in flight when Redis goes down rejects, typed, and is never taken as accepted', async () => {
    const [a, b] = await instances(2, [{}, { replyTimeoutMs: 1000 }])
    let release!: (accepted: boolean) => void
    const asked: string[] = []
    a!.register('main-a', (executionId) => {
      asked.push(executionId)
      return new Promise<boolean>((resolve) => (release = resolve))
    })
    const stop = b!.cancel('main-a', 'e1')
    await eventually(() => expect(asked).toEqual(['e1']))
    await redis.down()
    release(true)
    expect(['bus_unavailable', 'relay_timeout']).toContain((await rejection(stop)).code)
  })

  it('a bus that cannot reach Redis at all is refused at creation with bus_unavailable', async () => {
    await redis.down()
    const error = await rejection(createRedisBus({ url: redis.url, replyTimeoutMs: 500 }))
    expect(error.code).toBe('bus_unavailable')
  })
})

describe('the Redis bus parses what it reads [R-BUS-REDIS-PARSED]', () => {
  it('drops junk on every channel, counts it, logs it boundedly, and goes on', async () => {
    const logged: RedisBusLogEntry[] = []
    const [a, b] = await instances(2, [{}, { logger: (entry) => logged.push(entry) }])
    const asked: string[] = []
    b!.register('main-b', (executionId) => (asked.push(executionId), true))
    const heard = heardBy(b!, 'alice')
    const layout = redisLayout(channelPrefix)
    const push = (message: unknown, userId: unknown = 'alice') =>
      JSON.stringify({ v: 1, kind: 'push', from: 'elsewhere', userId, message })
    const junk: [string, string][] = [
      [layout.push, 'not json'],
      [layout.push, '[1,2]'],
      [layout.push, JSON.stringify({ ...JSON.parse(push(update('v2'))), v: 2 })],
      [layout.push, push({ type: 'agentExecutionUpdated', data: { executionId: 7 } })],
      [layout.push, push({ type: 'somethingElse', data: {} })],
      [layout.push, push(update('no-user'), '')],
      [layout.push, push(update('x'.repeat(70_000)))],
      [layout.stop, JSON.stringify({ v: 1, kind: 'stop', id: 's', mainId: 'main-b' })],
      [layout.stop, push(update('push-on-the-stop-channel'))],
      [
        layout.answer(b!.instanceId),
        JSON.stringify({ v: 1, kind: 'answer', id: 's', owner: 'yes' }),
      ],
    ]
    for (const [channel, text] of junk) await raw.publish(channel, text)
    await raw.publish(layout.push, push(update('valid')))
    await a!.publish('alice', update('from-a'))
    await eventually(() => expect(heard).toEqual(['valid', 'from-a']))
    expect(await a!.cancel('main-b', 'e1')).toBe(true)
    expect(asked).toEqual(['e1'])
    expect(b!.junkCount()).toBe(junk.length)
    // Instance a hears the push and stop channels, not b's answer channel.
    expect(a!.junkCount()).toBe(junk.length - 1)
    // Logged at the 1st, 2nd, 4th and 8th of the 10: bounded however much junk comes.
    expect(logged.filter((entry) => entry.event === 'junk')).toHaveLength(4)
  })
})

describe('a Stop remembered for its owner [R-BUS-REDIS-PENDING]', () => {
  it('applies after the owner resubscribes, to its own execution only, until Redis expires it', async () => {
    const [a, b, c] = await instances(3, [{}, {}, { pendingStopTtlMs: 1 }])
    const running = new Set<string>()
    const asked: string[] = []
    const cancelled: string[] = []
    a!.register('main-a', (executionId) => {
      asked.push(executionId)
      if (!running.has(executionId)) return false
      cancelled.push(executionId)
      return true
    })
    // Stops that reach the owner before their executions run: answered false, remembered.
    expect(await b!.cancel('main-a', 'e-early')).toBe(false)
    expect(await c!.cancel('main-a', 'e-expired')).toBe(false)
    expect(await b!.cancel('main-a', 'e-never')).toBe(false)
    const layout = redisLayout(channelPrefix)
    // Redis expires the short-lived one by itself (no clock of ours decides).
    await eventually(async () =>
      expect(await raw.exists(layout.pendingStop('main-a', 'e-expired'))).toBe(0),
    )
    expect(await raw.exists(layout.pendingStop('main-a', 'e-early'))).toBe(1)
    for (const id of ['e-early', 'e-expired', 'e-later']) running.add(id)
    asked.length = 0

    // Every subscription is cut: the owner reconnects, resubscribes and sweeps what it may have missed.
    await raw.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
    await eventually(() => expect(asked.toSorted()).toEqual(['e-early', 'e-never']))
    expect(cancelled).toEqual(['e-early'])
    // The relay works after the cut, and a later execution is stopped only when asked by its id.
    expect(await b!.cancel('main-a', 'e-later')).toBe(true)
    expect(cancelled).toEqual(['e-early', 'e-later'])
    // A Stop the owner accepted is not kept; one it could not apply (yet) is, until it expires.
    expect(await raw.exists(layout.pendingStop('main-a', 'e-later'))).toBe(0)
    await eventually(async () =>
      expect(await raw.exists(layout.pendingStop('main-a', 'e-early'))).toBe(0),
    )
    expect(await raw.exists(layout.pendingStop('main-a', 'e-never'))).toBe(1)
  })

  it('no main’s remembered Stop is another’s, whatever their ids hold', () => {
    const layout = redisLayout('p:')
    expect(layout.pendingStop('a', 'b:c')).not.toBe(layout.pendingStop('a:b', 'c'))
    expect(layout.pendingStops('a*')).toBe('p:stop:a\\*:*')
  })
})

describe('each Stop is its own request [R-BUS-REDIS-ANSWERED]', () => {
  it('a Stop nobody answers in time rejects with relay_timeout', async () => {
    const [a, b] = await instances(2, [{}, { replyTimeoutMs: 200 }])
    a!.register('main-a', () => new Promise<boolean>(() => {}))
    expect((await rejection(b!.cancel('main-a', 'e1'))).code).toBe('relay_timeout')
  })

  it('two quick Stops, for one execution or two, from one instance or two, are all answered', async () => {
    const [a, b, c] = await instances(3)
    const asked: string[] = []
    a!.register('main-a', async (executionId) => {
      asked.push(executionId)
      await new Promise((resolve) => setTimeout(resolve, 5))
      return executionId !== 'e-ended'
    })
    const answers = await Promise.all([
      b!.cancel('main-a', 'e1'),
      b!.cancel('main-a', 'e1'),
      c!.cancel('main-a', 'e1'),
      c!.cancel('main-a', 'e2'),
      b!.cancel('main-a', 'e-ended'),
    ])
    expect(answers).toEqual([true, true, true, true, false])
    expect(asked.toSorted()).toEqual(['e-ended', 'e1', 'e1', 'e1', 'e2'])
  })
})
