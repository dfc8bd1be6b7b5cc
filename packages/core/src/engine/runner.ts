/**
 * The one runner of the engine: what the session (`effects/session.ts`) and the model suite both
 * drive. It feeds actions through `reduce` one at a time, in order (an action dispatched while
 * commands are performed waits its turn), hands each step to the host, performs the step's
 * commands through the host, and keeps the alarm the reducer asks for (`set-alarm`): when its
 * time has come, it dispatches `tick`. It reads no engine state to decide anything — every
 * decision is the reducer's, and the runner only does what the commands say.
 *
 * No clock, timer or I/O of its own: the host injects them, so the same runner runs under real
 * timers in a browser and under a model's simulated time in a test.
 */
import type { Command, EngineAction, EngineConfig, EnginePart, EngineState, Step } from './model'
import { reducerWith } from './reduce'

/** What a runner needs from where it runs. */
export interface RunnerHost {
  /** The scheduler's clock (monotonic ms): what `at` of a `tick` is measured in. */
  now(): number
  /** Calls `ring` once, `delay` ms from now; returns the function that cancels it. */
  setTimer(delay: number, ring: () => void): () => void
  /** Performs one command (every one but `set-alarm` and `act`, which are the runner's). */
  perform(command: Command): void
  /** Sees every step before its commands run: the state to publish, the devtools' entry. */
  onStep?(action: EngineAction, step: Step): void
}

export interface Runner {
  dispatch(action: EngineAction): void
  getState(): EngineState
}

/**
 * Immediate ticks one drain may take before the runner waits for its timer instead: an alarm
 * due at once follows its `tick` at once, but a step that kept asking for one (a bug) cannot spin.
 */
const IMMEDIATE_TICKS = 16

/**
 * `parts`: the engine's parts the client has (the released platform's, the relay's, the queue's),
 * wrapped around the engine's decisions in that order; the runner ends each of its steps with the
 * one post-step (`reducerWith`).
 */
export function createRunner(
  initial: EngineState,
  config: EngineConfig,
  host: RunnerHost,
  parts: readonly EnginePart[] = [],
): Runner {
  const reducer = reducerWith(parts)
  let state = initial
  const queue: EngineAction[] = []
  let draining = false
  let immediate = 0
  let pending: { at: number; cancel: () => void } | null = null

  const alarm = (at: number | null) => {
    // A timer that rings no later than asked stays: its tick finds nothing due and the reducer
    // asks again, so a stream of changes (a delta per network chunk) costs no timer each.
    if (at !== null && pending && pending.at <= at) return
    pending?.cancel()
    pending = null
    if (at === null) return
    const now = host.now()
    if (at <= now && immediate < IMMEDIATE_TICKS) {
      immediate++
      queue.push({ type: 'tick', at: now })
      return
    }
    const cancel = host.setTimer(Math.max(0, at - now), () => {
      pending = null
      // The alarm's time has come, even if the clock reads a hair earlier.
      dispatch({ type: 'tick', at: Math.max(host.now(), at) })
    })
    pending = { at, cancel }
  }

  const dispatch = (action: EngineAction) => {
    queue.push(action)
    if (draining) return
    draining = true
    try {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const step = reducer(state, next, config)
        state = step.state
        host.onStep?.(next, step)
        for (const command of step.commands)
          if (command.type === 'set-alarm') alarm(command.at)
          // An action the step asks for: its own step, after this one's commands.
          else if (command.type === 'act') queue.push(command.action)
          else host.perform(command)
      }
    } finally {
      draining = false
      immediate = 0
    }
  }

  return { dispatch, getState: () => state }
}
