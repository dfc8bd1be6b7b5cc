/** What the Redis bus reports (a `logger` option receives each entry; nothing is printed otherwise). */
export interface RedisBusLogEntry {
  level: 'info' | 'warn' | 'error'
  event:
    | 'redis_down'
    | 'redis_up'
    /** A message read from Redis was not one of the bus's: dropped (and counted). */
    | 'junk'
    /** A main's cancel handler threw: the Stop is answered as not accepted. */
    | 'cancel_failed'
    /** An answer or a sweep of remembered Stops could not reach Redis. */
    | 'relay_failed'
  message: string
  executionId?: string
}

export type RedisBusLogger = (entry: RedisBusLogEntry) => void
