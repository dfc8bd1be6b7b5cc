import type { Timers } from '../platform/environment'

/** A resource opened by its first user and closed a moment after its last one left. */
export interface Lingering {
  /** Takes a share of the resource (opening it if needed); returns the function that gives it back. */
  acquire(): () => void
  /** Closes the resource now, whoever still holds it. */
  close(): void
  readonly isOpen: boolean
}

/**
 * Opens with the first `acquire()` and closes `lingerMs` after the last release, so a React
 * StrictMode remount (release, then acquire at once) reuses what is open instead of reconnecting.
 * Used by the session, the push channel and the tab relay.
 */
export function lingering(open: () => () => void, timers: Timers, lingerMs: number): Lingering {
  let closeOpen: (() => void) | null = null
  let holders = 0
  let timer: unknown
  const close = () => {
    timers.clearTimeout(timer)
    const closing = closeOpen
    closeOpen = null
    closing?.()
  }
  return {
    acquire() {
      holders++
      timers.clearTimeout(timer)
      closeOpen ??= open()
      let held = true
      return () => {
        if (!held) return
        held = false
        if (--holders > 0) return
        timer = timers.setTimeout(() => {
          if (holders === 0) close()
        }, lingerMs)
      }
    },
    close,
    get isOpen() {
      return closeOpen !== null
    },
  }
}
