import type { Timers } from '@preview-chat/core'
import { defaultTimers } from '@preview-chat/core/internal'

/**
 * Every pause of the scripted agent goes through a `Sleep`, so that tests and scenarios can pace a
 * turn step by step instead of waiting on the clock. It must reject once `signal` aborts (a Stop).
 */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>

/** A `Sleep` on the given timers. */
export const sleepOn =
  (timers: Pick<Timers, 'setTimeout' | 'clearTimeout'>): Sleep =>
  (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason as Error)
        return
      }
      const onAbort = () => {
        timers.clearTimeout(timer)
        reject(signal.reason as Error)
      }
      const timer = timers.setTimeout(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }, ms)
      signal.addEventListener('abort', onAbort, { once: true })
    })

/** The platform's timers (core's own), as the server uses them unless a test injects others. */
export const platformTimers: Timers = defaultTimers

/** A `Sleep` on the platform's timers. */
export const timerSleep: Sleep = sleepOn(platformTimers)
