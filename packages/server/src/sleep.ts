/**
 * Every pause of the scripted agent goes through a `Sleep`, so that tests and scenarios can pace a
 * turn step by step instead of waiting on the clock. It must reject once `signal` aborts (a Stop).
 */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>

export const timerSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason as Error)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
