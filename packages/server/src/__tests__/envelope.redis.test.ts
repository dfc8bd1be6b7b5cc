import type { ServerPushMessage } from '@preview-chat/core/contract'
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sharedTestRedis } from '../../../../scripts/services/redis.mjs'
import { createRedisBus, redisLayout, type RedisBus } from '../redis'
import { collectUnhandled, propertyRuns } from './harness'

// Anything anyone writes on the bus's channels, against a real Redis: what is a well-formed message
// is heard, in order, and everything else is dropped and counted, never thrown.
vi.setConfig({ testTimeout: 120_000 })
const runs = (numRuns: number) => propertyRuns(numRuns, 'src/__tests__/envelope.redis.test.ts')
const unhandled = collectUnhandled()

let redis: Awaited<ReturnType<typeof sharedTestRedis>>
let raw: Redis
let bus: RedisBus
const channelPrefix = `envelope-${process.pid}:`
const layout = redisLayout(channelPrefix)
beforeAll(async () => {
  redis = await sharedTestRedis()
  raw = new Redis(redis.url)
  bus = await createRedisBus({ url: redis.url, channelPrefix })
}, 180_000) // long enough for a first run that installs redis-server
afterAll(async () => {
  await bus.close()
  raw.disconnect()
  await redis.stop()
})

const id = fc.string({ minLength: 1, maxLength: 12 })
const pushMessage: fc.Arbitrary<ServerPushMessage> = fc.oneof(
  fc.record({
    type: fc.constant('agentExecutionUpdated' as const),
    data: fc.record({ projectId: id, agentId: id, threadId: id, executionId: id }),
  }),
  fc.record({
    type: fc.constant('agentMessageQueueUpdated' as const),
    data: fc.record({ projectId: id, agentId: id, threadId: id }),
  }),
)
const envelope = fc.record({
  v: fc.constant(1),
  kind: fc.constant('push'),
  from: id,
  userId: fc.constant('alice'),
  message: pushMessage,
})
type Sent = { text: string; heard?: ServerPushMessage }
/** A well-formed push for alice, heard as sent. */
const valid: fc.Arbitrary<Sent> = envelope.map((value) => ({
  text: JSON.stringify(value),
  heard: value.message,
}))
/** A well-formed envelope with one field dropped or replaced by any JSON value. */
const broken: fc.Arbitrary<Sent> = fc
  .tuple(
    envelope,
    fc.constantFrom('v', 'kind', 'from', 'userId', 'message', 'message.type', 'message.data'),
    fc.option(fc.jsonValue(), { nil: undefined }),
  )
  .filter(([value, field, replacement]) => {
    const current = field.startsWith('message.')
      ? (value.message as unknown as Record<string, unknown>)[field.slice(8)]
      : (value as Record<string, unknown>)[field]
    // A replacement equal to what a valid message may hold there is no junk (another sender's id
    // or another user's message is well-formed).
    const isId =
      typeof replacement === 'string' && replacement.length > 0 && replacement.length <= 512
    return (
      JSON.stringify(replacement) !== JSON.stringify(current) &&
      !((field === 'from' || field === 'userId') && isId)
    )
  })
  .map(([value, field, replacement]) => {
    const copy = structuredClone(value) as unknown as Record<string, Record<string, unknown>>
    const [outer, inner] = field.split('.') as [string, string | undefined]
    const target = inner ? copy[outer]! : (copy as Record<string, unknown>)
    const key = inner ?? outer
    if (replacement === undefined) Reflect.deleteProperty(target, key)
    else target[key] = replacement
    return { text: JSON.stringify(copy) }
  })
const junkText: fc.Arbitrary<Sent> = fc
  .oneof(
    fc.string(),
    fc.jsonValue().map((value) => JSON.stringify(value) ?? 'undefined'),
  )
  .map((text) => ({ text }))

describe('whatever is written on the push channel [R-BUS-REDIS-PARSED]', () => {
  it('the well-formed messages are heard in order; the rest is dropped, counted, never thrown', async () => {
    const heard: ServerPushMessage[] = []
    bus.subscribe('alice', (message) => heard.push(message))
    let marker = 0
    const sizes = { runs: 40, messagesPerRun: 12 }
    console.log(`[property] sizes: ${sizes.runs} runs of up to ${sizes.messagesPerRun} messages`)
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(valid, broken, junkText), { maxLength: sizes.messagesPerRun }),
        async (batch) => {
          heard.length = 0
          const junkBefore = bus.junkCount()
          for (const sent of batch) await raw.publish(layout.push, sent.text)
          // A last well-formed message: once it is heard, the whole batch has been read.
          const end: ServerPushMessage = {
            type: 'agentMessageQueueUpdated',
            data: { projectId: 'end', agentId: 'end', threadId: String(++marker) },
          }
          await raw.publish(
            layout.push,
            JSON.stringify({ v: 1, kind: 'push', from: 'test', userId: 'alice', message: end }),
          )
          await vi.waitFor(() => expect(heard.at(-1)).toEqual(end), { timeout: 10_000 })
          const expected = batch.flatMap((sent) => (sent.heard ? [sent.heard] : []))
          expect(heard).toEqual([...expected, end])
          const junk = batch.filter((sent) => !sent.heard).length
          expect(bus.junkCount() - junkBefore).toBe(junk)
        },
      ),
      runs(sizes.runs),
    )
    expect(unhandled).toEqual([])
  })
})
