import type { Timers } from '../platform/environment'

/** One timer for the earliest thing due: what the session's scheduler sets after every change. */
export interface Alarm {
  /** Rings at `due` (scheduler time; `Infinity`: never), unless it is set to ring earlier already. */
  set(due: number, now: number): void
  clear(): void
}

/**
 * Keeps a single pending timer. Setting a later time than the one pending changes nothing (the
 * earlier ring re-asks the scheduler, which sets the next one), so a stream of changes — a delta
 * per network chunk — costs a comparison, not a timer each.
 */
export function createAlarm(timers: Timers, ring: (due: number) => void): Alarm {
  let pending: { due: number; handle: unknown } | null = null
  const clear = () => {
    if (pending) timers.clearTimeout(pending.handle)
    pending = null
  }
  return {
    set(due, now) {
      if (pending && pending.due <= due) return
      clear()
      if (due === Infinity) return
      const handle = timers.setTimeout(() => {
        pending = null
        ring(due)
      }, due - now)
      pending = { due, handle }
    },
    clear,
  }
}
