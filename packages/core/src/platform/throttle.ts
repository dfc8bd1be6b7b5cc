import { defaultTimers, type Timers } from './environment'

/**
 * A read-only store: what `useStore` and `useStoreWithEqualityFn` take (zustand's `StoreApi` less
 * `setState`), and what a session's views are.
 */
export interface ReadonlyStore<T> {
  getState(): T
  getInitialState(): T
  subscribe(listener: (state: T, previous: T) => void): () => void
}

export interface ThrottleOptions {
  /**
   * The longest a streamed change may wait before it reaches subscribers: a number of ms, or
   * `'frame'` (default) for the next animation frame. `0` turns throttling off.
   */
  throttleMs?: number | 'frame'
  /** The timers used where there is no `requestAnimationFrame` (and for a number of ms). */
  timers?: Timers
}

/** What the throttle tells apart: a state whose transcript (`messages`) may wait for a frame. */
type Transcribed = { readonly messages: unknown }

type Schedule = (callback: () => void) => () => void

function scheduler(throttleMs: number | 'frame', timers: Timers): Schedule {
  if (throttleMs === 'frame' && typeof requestAnimationFrame === 'function') {
    return (callback) => {
      const handle = requestAnimationFrame(callback)
      return () => cancelAnimationFrame(handle)
    }
  }
  const ms = throttleMs === 'frame' ? 16 : throttleMs
  return (callback) => {
    const handle = timers.setTimeout(callback, ms)
    return () => timers.clearTimeout(handle)
  }
}

/** Only the transcript changed: a streamed delta, which may wait for the next frame. */
function onlyMessagesChanged<S extends Transcribed>(previous: S, next: S): boolean {
  for (const key of Object.keys(next) as (keyof S)[]) {
    if (key !== 'messages' && previous[key] !== next[key]) return false
  }
  return true
}

/**
 * A view of a session's store that passes streamed deltas on at most once per frame (or per
 * `throttleMs`), while every other change — a new status, the end of a turn, an error, a keystroke
 * in the draft — goes through at once, carrying the latest transcript with it. So a UI renders
 * ~60 times a second however fast tokens arrive, and the final state of a turn is never delayed.
 * The view is a read-only zustand store; it listens to the session only while it has listeners.
 */
export function throttleState<S extends Transcribed>(
  source: ReadonlyStore<S>,
  options: ThrottleOptions = {},
): ReadonlyStore<S> {
  const throttleMs = options.throttleMs ?? 'frame'
  if (throttleMs === 0) return source
  const schedule = scheduler(throttleMs, options.timers ?? defaultTimers)
  const listeners = new Set<(state: S, previous: S) => void>()
  let published = source.getState()
  let cancel: (() => void) | null = null
  let unsubscribe: (() => void) | null = null

  const flush = () => {
    cancel?.()
    cancel = null
    const previous = published
    published = source.getState()
    if (published !== previous) listeners.forEach((listener) => listener(published, previous))
  }
  const onChange = (next: S) => {
    if (next === published) return
    if (!onlyMessagesChanged(published, next)) flush()
    else cancel ??= schedule(flush)
  }

  return {
    getState: () => (unsubscribe ? published : (published = source.getState())),
    getInitialState: source.getInitialState,
    subscribe(listener) {
      listeners.add(listener)
      if (!unsubscribe) {
        published = source.getState()
        unsubscribe = source.subscribe(onChange)
      }
      return () => {
        listeners.delete(listener)
        if (listeners.size > 0 || !unsubscribe) return
        unsubscribe()
        unsubscribe = null
        cancel?.()
        cancel = null
      }
    },
  }
}
