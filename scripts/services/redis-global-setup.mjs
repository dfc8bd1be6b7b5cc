// A vitest globalSetup: one Redis for every test file of a run, its URL handed to the workers in
// PREVIEW_CHAT_TEST_REDIS_URL (read by sharedTestRedis()), stopped when the run ends. Wire it in
// vitest.config.ts (`globalSetup: ['../../scripts/services/redis-global-setup.mjs']` in the server
// project); without it each Redis test file starts its own.
import { startRedis, testRedisUrlVariable } from './redis.mjs'

export default async function setup() {
  const redis = await startRedis()
  process.env[testRedisUrlVariable] = redis.url
  return async () => {
    delete process.env.PREVIEW_CHAT_TEST_REDIS_URL
    await redis.stop()
  }
}
