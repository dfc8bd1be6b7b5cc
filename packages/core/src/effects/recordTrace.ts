import type { EngineTrace } from '../engine/trace'
import { traceRecorder } from '../engine/trace'
import type { PreviewChatSession } from './session'

/**
 * Devtools and bug reports: records `session`'s engine steps from now on. `trace()` gives the run
 * so far as an `EngineTrace` — plain JSON (`JSON.stringify` it to keep it) that `replayTrace`
 * replays through the reducer step by step (`reduce`, with every part; a client with `queue()`: through
 * `reducerWith(withQueue, everyPart)`; a minimal client's through `reducerWith(undefined, parts)` with
 * the parts it had, e.g. `[relayPart]` without the released platform's);
 * `stop()` ends the recording. A function of `@preview-chat/core/internal`, so that an app that
 * never records carries none of it.
 */
export function recordTrace(session: PreviewChatSession): { trace(): EngineTrace; stop(): void } {
  const recorder = traceRecorder(session.getEngineState(), session.config)
  const stop = session.inspect(({ action, commands, state }) =>
    recorder.onStep(action, { commands: [...commands], state }),
  )
  return { trace: recorder.trace, stop }
}
