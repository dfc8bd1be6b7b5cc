import type { PushMessage, ServerPushMessage } from '@preview-chat/core/contract'

/** Hears a user's execution updates (what every flavor sends). */
export type PushListener = (message: PushMessage) => void
/** Hears every push message of a user, the next-era flavor's queue updates included. */
export type ServerPushListener = (message: ServerPushMessage) => void

/** Fans a user's push messages out to each of the user's connections (every tab). */
export interface PushHub {
  subscribe(userId: string, listener: ServerPushListener): () => void
  publish(userId: string, message: ServerPushMessage): void
  /** How many connections the user has open (for tests). */
  count(userId: string): number
}

export function createPushHub(): PushHub {
  const listeners = new Map<string, Set<ServerPushListener>>()
  return {
    subscribe(userId, listener) {
      let set = listeners.get(userId)
      if (!set) listeners.set(userId, (set = new Set()))
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size === 0 && listeners.get(userId) === set) listeners.delete(userId)
      }
    },
    publish(userId, message) {
      // "Other users' executions are never announced to a user": only the owner's set is reached.
      for (const listener of [...(listeners.get(userId) ?? [])]) {
        try {
          listener(message)
        } catch {
          // One broken connection must not keep the message from the user's other tabs.
        }
      }
    },
    count(userId) {
      return listeners.get(userId)?.size ?? 0
    },
  }
}
