import type { EngineTrace } from '../engine/trace'
import { traceRecorder } from '../engine/trace'
import type { PreviewChatSession } from './session'

/**
 * Devtools and bug reports: records `session`'s engine steps from now on. `trace()` gives the run
 * so far as an `EngineTrace` — plain JSON (`JSON.stringify` it to keep it) that `replayTrace`
 * replays through the reducer of the parts the session had, step by step: `reduce` for
 * `createPreviewChatClient`'s with a relay (`everyPart`); with `queue()`,
 * `reducerWith([...everyPart, queuePart])`; otherwise `reducerWith(parts)` with the parts it had, in
 * the client's order (e.g. `[releasedPart]` with no relay, `[relayPart]` for a minimal client);
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
