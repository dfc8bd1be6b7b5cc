/** A private redis-server for the tests, on a loopback port (see redis.mjs). */
export interface TestRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  /** Ends it and starts a new one on the same port (its data is gone: nothing is saved). */
  restart(): Promise<void>
  /** Ends it, keeping the port and directory for `up()`. */
  down(): Promise<void>
  /** Starts it again on the same port after `down()`. */
  up(): Promise<void>
  /** Ends it and removes its directory. */
  stop(): Promise<void>
}

/** Installs Debian's redis-server when missing (root and apt-get); returns the binary's path. */
export function ensureRedisServer(): string
/** Starts a private redis-server on a free port of 127.0.0.1. */
export function startRedis(): Promise<TestRedis>
/** `PREVIEW_CHAT_TEST_REDIS_URL` */
export const testRedisUrlVariable: string
/** The global setup's Redis when there is one, else one started for the caller alone. */
export function sharedTestRedis(): Promise<{ url: string; stop(): Promise<void> }>
