/**
 * How a Stop reaches the main that runs the execution ("The server cancels the local execution or
 * relays the request to the main that owns it"). Each main registers the handler that cancels its
 * own executions; a main that receives a Stop for another main's execution calls `cancel` with the
 * owner's id. A deployment across processes implements this over its message bus; the in-process
 * relay (the default, shared through the store) serves several mains in one process.
 */
export interface ExecutionRelay {
  /** Registers the handler of main `mainId`; returns the function that unregisters it. */
  register(mainId: string, cancel: (executionId: string) => boolean | Promise<boolean>): () => void
  /**
   * Asks main `mainId` to cancel `executionId`. Resolves to whether the cancellation was accepted:
   * false when that main is unknown or no longer runs the execution.
   */
  cancel(mainId: string, executionId: string): Promise<boolean>
}

export function createInProcessRelay(): ExecutionRelay {
  const handlers = new Map<string, (executionId: string) => boolean | Promise<boolean>>()
  return {
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
