import type { ServerPushMessage } from '@preview-chat/core/contract'
import { createMemoryBus } from '../bus/memory'
import type { ServerPushListener } from '../bus/types'
import type { RedisConnections } from './connections'
import { encodeEnvelope, type Envelope } from './envelope'
import { unavailable } from './errors'

type PushEnvelope = Extract<Envelope, { kind: 'push' }>

/**
 * Push fan-out over Redis: one channel for every user, one subscription per instance, and the
 * instance's own listeners per user (the in-process bus's, so that local delivery is one
 * implementation). A publish reaches this instance's listeners at once and the others' through
 * Redis; an instance skips its own messages when Redis hands them back, so each listener hears
 * each message once.
 */
export function createPushFanout(options: {
  instanceId: string
  channel: string
  connections: () => RedisConnections
}) {
  const local = createMemoryBus()
  return {
    /**
     * Delivers here, then publishes to the other instances; rejects with `bus_unavailable` when
     * Redis is away (this instance's listeners heard it; the others did not).
     */
    async publish(userId: string, message: ServerPushMessage): Promise<void> {
      await local.publish(userId, message)
      const envelope: PushEnvelope = {
        v: 1,
        kind: 'push',
        from: options.instanceId,
        userId,
        message,
      }
      try {
        await options.connections().commands.publish(options.channel, encodeEnvelope(envelope))
      } catch (cause) {
        throw unavailable('publishing a push message to the other instances', cause)
      }
    },

    subscribe: (userId: string, listener: ServerPushListener): (() => void) =>
      local.subscribe(userId, listener),

    onPush(push: PushEnvelope): void {
      if (push.from !== options.instanceId) void local.publish(push.userId, push.message)
    },
  }
}
