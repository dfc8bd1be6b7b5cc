/** The queue's state in the engine state: under its own key, which the engine's steps carry through. */
import type { EngineState } from '../model'
import type { QueueState } from './model'

/**
 * The engine state with the queue's part (`withQueue`): the queue wraps the state, as it wraps the
 * reducer. Absent without a queue, and until the session mounts.
 */
export type QueuedState = EngineState & { readonly queue?: QueueState }

/** The queue's part of `state` (absent without a queue). */
export const queueOf = (state: EngineState): QueueState | undefined => (state as QueuedState).queue
