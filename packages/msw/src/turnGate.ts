/**
 * Holds the scripted agent's pauses so that a test or a story advances a turn one step at a time,
 * like a controlled stream. Every pause of the reference backend's agent goes through its `sleep`
 * (one pause per streamed delta in the scripted agent); a held pause waits here until released.
 */

/** A turn held open: release its pauses one by one, or all at once. */
export interface TurnGate {
  /**
   * Lets the oldest held pause go and resolves once that turn has paused again or its agent has
   * finished (its end is then recorded). Waits for a pause to arrive first if none is held yet (the
   * POST may still be on its way). `count` repeats it.
   */
  step(count?: number): Promise<void>
  /** Resolves once at least one pause is held (the turn has started and waits for `step`). */
  waitForPause(): Promise<void>
  /** Lets every held pause go and stops holding: the turns run on at the backend's `deltaMs`. */
  release(): void
  /** How many pauses wait now. */
  readonly pending: number
  /** Whether new pauses are held. */
  readonly holding: boolean
}

interface HeldPause {
  turn: number
  go(): void
}

/** @internal The gate plus the hooks the mock wires into the backend. */
export interface InternalTurnGate extends TurnGate {
  /** Holds a pause of `turn` if the gate holds, else runs `fallback`. */
  pause(turn: number, signal: AbortSignal, fallback: () => Promise<void>): Promise<void>
  /** The agent of `turn` returned (or threw): its turn will pause no more. */
  ended(turn: number): void
  hold(): void
}

/** A macrotask, so the backend's synchronous end of a turn (recording, `done`) has happened. */
const nextTask = () => new Promise<void>((resolve) => setTimeout(resolve, 0))

export function createTurnGate(holding = false): InternalTurnGate {
  const held: HeldPause[] = []
  let isHolding = holding
  // Whoever waits for "turn N paused again or ended", and whoever waits for any pause.
  const turnWaiters = new Map<number, (() => void)[]>()
  let pauseWaiters: (() => void)[] = []

  const notifyTurn = (turn: number) => {
    const waiters = turnWaiters.get(turn) ?? []
    turnWaiters.delete(turn)
    for (const wake of waiters) wake()
  }
  const waitForTurn = (turn: number) =>
    new Promise<void>((resolve) => {
      turnWaiters.set(turn, [...(turnWaiters.get(turn) ?? []), resolve])
    })
  const waitForPause = () =>
    held.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => pauseWaiters.push(resolve))

  const stepOnce = async () => {
    await waitForPause()
    const next = held.shift()
    if (!next) return
    const paused = waitForTurn(next.turn)
    next.go()
    await paused
    await nextTask()
  }

  return {
    get pending() {
      return held.length
    },
    get holding() {
      return isHolding
    },
    hold() {
      isHolding = true
    },
    waitForPause,
    async step(count = 1) {
      for (let index = 0; index < count; index++) await stepOnce()
    },
    release() {
      isHolding = false
      for (const pause of held.splice(0)) pause.go()
    },
    pause(turn, signal, fallback) {
      if (!isHolding) return fallback()
      return new Promise<void>((resolve, reject) => {
        // A Stop aborts the execution: its held pause must end at once, as a timer's would.
        const onAbort = () => {
          const index = held.indexOf(pause)
          if (index >= 0) held.splice(index, 1)
          reject(signal.reason as Error)
        }
        const pause: HeldPause = {
          turn,
          go: () => {
            signal.removeEventListener('abort', onAbort)
            resolve(fallback())
          },
        }
        if (signal.aborted) {
          reject(signal.reason as Error)
          return
        }
        signal.addEventListener('abort', onAbort, { once: true })
        held.push(pause)
        notifyTurn(turn)
        const waiters = pauseWaiters
        pauseWaiters = []
        for (const wake of waiters) wake()
      })
    },
    ended(turn) {
      notifyTurn(turn)
    },
  }
}
