import type { CancelHandler, PreviewChatBus, ServerPushListener } from './types'

/**
 * The in-process bus: the embedded default, shared by the mains of one process (pass one bus to
 * several backends to simulate several mains). Delivery is synchronous, within `publish`.
 */
export function createMemoryBus(): PreviewChatBus {
  const listeners = new Map<string, Set<ServerPushListener>>()
  const handlers = new Map<string, CancelHandler>()
  return {
    publish(userId, message) {
      // "Other users' executions are never announced to a user": only the owner's set is reached.
      for (const listener of [...(listeners.get(userId) ?? [])]) {
        try {
          listener(structuredClone(message))
        } catch {
          // One broken connection must not keep the message from the user's other tabs.
        }
      }
      return Promise.resolve()
    },
    subscribe(userId, listener) {
      let set = listeners.get(userId)
      if (!set) listeners.set(userId, (set = new Set()))
      // Each subscription is its own, even for the same function (two tabs, one callback).
      const own: ServerPushListener = (message) => listener(message)
      set.add(own)
      return () => {
        set.delete(own)
        if (set.size === 0 && listeners.get(userId) === set) listeners.delete(userId)
      }
    },
    register(mainId, cancel) {
      handlers.set(mainId, cancel)
      return () => {
        if (handlers.get(mainId) === cancel) handlers.delete(mainId)
      }
    },
    async cancel(mainId, executionId) {
      const handler = handlers.get(mainId)
      return handler ? await handler(executionId) : false
    },
  }
}
