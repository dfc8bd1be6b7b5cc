/**
 * What the mains of one deployment tell each other, as an interface: a user's push messages
 * (every tab of the user, on whichever main its connection is) and Stops (to the main that runs
 * the execution). `createMemoryBus()` (`./memory`) serves the mains of one process;
 * `describeBusSuite` (`./suite`) pins the contract for any implementation (e.g. Redis pub/sub).
 */
import type { ServerPushMessage } from '@preview-chat/core/contract'

/** Hears every push message of a user, the next-era flavor's queue updates included. */
export type ServerPushListener = (message: ServerPushMessage) => void

/**
 * Cancels one execution of a main: whether the cancellation was accepted ("false when that
 * execution is not running any more").
 */
export type CancelHandler = (executionId: string) => boolean | Promise<boolean>

/**
 * Push fan-out and the Stop relay between the mains of one deployment. Messages are plain
 * JSON-able data; a bus may carry them across processes.
 *
 * **Pending Stops.** A Stop is relayed to the main the execution's record names
 * (`ExecutionRecord.mainId`), and that main alone decides: if it has admitted the execution but not
 * started it yet, it remembers the Stop and applies it when the turn starts (the platform's
 * "pending Stops"; see the backend's `cancelLocal`). `cancel` for a main that is not registered
 * answers `false`, and registering never delivers an earlier Stop. A bus across processes may keep
 * a relayed Stop under its exact main and execution id for a bounded time and hand it to that
 * main's handler once the main's connection is restored (the Redis bus does, so that a Stop missed
 * across a reconnect still lands); it only ever reaches the execution it names, never a later one.
 */
export interface PreviewChatBus {
  /**
   * Delivers `message` to every subscriber of `userId`, on every main of the deployment, in the
   * order one main publishes; never to another user's. Resolves once sent (not once heard).
   */
  publish(userId: string, message: ServerPushMessage): Promise<void>
  /**
   * Hears the messages of `userId` published from now on (by any main); returns the function that
   * stops it. A listener that throws does not keep the message from the others.
   */
  subscribe(userId: string, listener: ServerPushListener): () => void
  /**
   * Registers main `mainId`'s cancel handler (one per main; a second replaces the first); returns
   * the function that unregisters it (which leaves a handler that replaced it alone).
   */
  register(mainId: string, cancel: CancelHandler): () => void
  /**
   * Asks main `mainId`, wherever it runs, to cancel `executionId`: resolves to its handler's
   * answer, or `false` when no main of that id is registered (see "Pending Stops" above).
   */
  cancel(mainId: string, executionId: string): Promise<boolean>
}
