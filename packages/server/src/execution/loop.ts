import type { Message, TurnEvent } from '@preview-chat/core/contract'
import type { AgentInput } from '../agent'
import type { ExecutionOutcome } from './ending'
import type { TurnRecorder } from './recorder'
import type { AbortReason, ExecutionSettings } from './types'

/**
 * Runs the agent to its outcome while a timer records the turn in batches ("Snapshots are recorded
 * in batches": each tick records what changed since the last one). Never rejects: a crash of the
 * agent is an `agent_crashed` error, an abort is the reason it was aborted for.
 */
export async function runAgent(
  settings: ExecutionSettings,
  input: AgentInput,
  recorder: TurnRecorder,
  controller: AbortController,
  history: readonly Message[],
  onPause?: () => Promise<void>,
  settled: () => void = () => {},
): Promise<ExecutionOutcome> {
  const { timers, snapshotMs } = settings
  let timer: unknown
  const batch = () => {
    recorder.recordIfChanged()
    timer = timers.setTimeout(batch, snapshotMs)
  }
  timer = timers.setTimeout(batch, snapshotMs)
  const emit = (event: TurnEvent) => {
    controller.signal.throwIfAborted()
    recorder.send(event)
  }
  try {
    const outcome = await settings.agent(input, {
      emit,
      // The sleep starts at once (a host may pace pauses by their order), while a flavor's pause
      // work (steers joining) runs beside it; the agent goes on once both are done.
      pause: () => {
        const slept = settings.sleep(settings.deltaMs, controller.signal)
        return onPause ? Promise.all([onPause(), slept]).then(() => undefined) : slept
      },
      id: (prefix) => `${prefix}-${settings.newId()}`,
      now: settings.now,
      signal: controller.signal,
      history,
    })
    controller.signal.throwIfAborted()
    // In the same step as the check: from now on a Stop comes too late for this outcome.
    settled()
    return outcome
  } catch (error) {
    settled()
    if (controller.signal.aborted) return { kind: abortReason(controller.signal) }
    // The detail (a message, a stack: maybe a secret, another user's data) goes to the log only.
    return { kind: 'crashed', error }
  } finally {
    timers.clearTimeout(timer)
  }
}

function abortReason(signal: AbortSignal): AbortReason {
  const reason: unknown = signal.reason
  const reasons: readonly unknown[] = ['close', 'left', 'too_long', 'shutdown']
  return reasons.includes(reason) ? (reason as AbortReason) : 'stop'
}
