import { afterAll, beforeAll } from 'vitest'
import { sharedTestRedis } from '../../../../scripts/services/redis.mjs'
import { describeBusSuite } from '../bus/suite'
import { createRedisBus } from '../redis'

// The bus contract, as the in-process bus passes it, against a real redis-server: each test's
// buses are separate instances (their own connections) on one Redis, under a prefix of their own.
let redis: Awaited<ReturnType<typeof sharedTestRedis>>
// Long enough for a first run that installs redis-server.
beforeAll(async () => {
  redis = await sharedTestRedis()
}, 180_000)
afterAll(() => redis.stop())

let fixtures = 0
describeBusSuite('redis', async (n) => {
  const channelPrefix = `suite-${process.pid}-${++fixtures}:`
  const buses = await Promise.all(
    Array.from({ length: n }, () => createRedisBus({ url: redis.url, channelPrefix })),
  )
  return {
    buses,
    close: async () => {
      await Promise.all(buses.map((bus) => bus.close()))
    },
  }
})
