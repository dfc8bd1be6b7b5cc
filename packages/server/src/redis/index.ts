/**
 * `@preview-chat/server/redis`: the bus on Redis, for a deployment of several processes (mains).
 * A separate entry: it needs Node (`ioredis`), and the main entry stays browser-safe.
 */
export { createRedisBus } from './bus'
export type { RedisBus, RedisBusOptions } from './bus'
export { RedisBusError } from './errors'
export type { RedisBusErrorCode } from './errors'
export { redisLayout } from './layout'
export type { RedisLayout } from './layout'
export type { RedisBusLogEntry, RedisBusLogger } from './log'
