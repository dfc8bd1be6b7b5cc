import { recordedMessageId } from '@preview-chat/core/contract'
import { createSseStream, turnQueueLimitBytes, type SseStream } from '../sse'
import { endExecution } from './ending'
import { runAgent } from './loop'
import { createTurnRecorder, type TurnRecorder } from './recorder'
import type { AbortReason, ExecutionSettings, RunningExecution, StartExecution } from './types'

/**
 * Runs an admitted execution (the store recorded it): registers its cancellation handle, records
 * the first snapshot and only then writes `execution-started` ("The server records the execution and registers its
 * cancellation handle before it sends `execution-started`"). The agent then runs on its own: the
 * turn does not depend on anyone reading `stream` ("An accepted preview turn continues when its
 * browser connection closes").
 *
 * The flavor's `rules` can leave out the start (no first snapshot, no `execution-started`: the
 * first snapshot is then the first timer tick's) and make a client that leaves cancel the turn.
 */
export function startExecution(
  settings: ExecutionSettings,
  start: StartExecution,
  register: (running: RunningExecution) => void,
  unregister: (executionId: string) => void,
): RunningExecution {
  const { thread, execution } = start
  // What the agent is given to build the model's context: the record before this turn.
  const history = structuredClone(thread.messages)
  const controller = new AbortController()
  const stream = turnStream(settings, start, controller)
  const recorder = createTurnRecorder(settings, start, execution, stream)

  let resolveFinished = () => {}
  let resolveStarted = () => {}
  const running: RunningExecution = {
    id: execution.id,
    controller,
    stream,
    ending: false,
    started: new Promise<void>((resolve) => {
      resolveStarted = resolve
    }),
    finished: new Promise<void>((resolve) => {
      resolveFinished = resolve
    }),
  }
  register(running)
  const ids = { mainId: settings.mainId, executionId: execution.id, threadId: thread.id }
  settings.log({ level: 'info', event: 'turn_started', ...ids, userId: thread.ownerId })
  // "A turn's maximum duration": past it the turn ends as `error` (`turn_too_long`).
  const { maxTurnMs, timers } = settings
  const tooLong =
    maxTurnMs === undefined
      ? undefined
      : timers.setTimeout(() => {
          if (!controller.signal.aborted) controller.abort('too_long' satisfies AbortReason)
        }, maxTurnMs)
  const ending = { execution, thread, recorder, stream, unregister: () => unregister(execution.id) }
  const { onPause } = settings
  const pause = onPause && (() => onPause(thread, execution.id, recorder))
  announceStart(settings, start, recorder, stream)
    .finally(resolveStarted)
    .then(
      () =>
        runAgent(settings, start.input, recorder, controller, history, pause, () => {
          running.ending = true
        }),
      // The first snapshot could not be written (the store went away since the admission): the
      // turn ends as `error`, its end recorded once the store is back.
      (error: unknown) => {
        settings.onFailure('snapshot_write_failed', execution, error)
        return { kind: 'error', message: startFailed, errorCode: 'store_unavailable' } as const
      },
    )
    .then(async (outcome) => {
      if (tooLong !== undefined) timers.clearTimeout(tooLong)
      const ended = await endExecution(settings, ending, outcome)
      settings.log({ level: 'info', event: 'turn_ended', ...ids, status: ended.status })
      await settings.onEnded?.(thread, ended)
    })
    .catch((error: unknown) => settings.onFailure('execution_failed', execution, error))
    .finally(resolveFinished)
  return running
}

const startFailed = 'The turn could not be recorded as it started. Send the message again.'

/** The first snapshot recorded, then `execution-started` (where the flavor announces the start). */
async function announceStart(
  settings: ExecutionSettings,
  start: StartExecution,
  recorder: TurnRecorder,
  stream: SseStream,
): Promise<void> {
  if (!settings.rules.announcesStart) return
  const { execution, thread } = start
  await recorder.record()
  const inputMessageIds = [start.messageId ?? recordedMessageId(execution.id, 'user')]
  stream.send({
    type: 'execution-started',
    executionId: execution.id,
    sessionId: thread.id,
    ...(start.announcesInputs && { inputMessageIds }),
  })
}

/**
 * The live stream of the turn, bounded as the push streams are: a reader that leaves more than
 * `turnQueueLimitBytes` unread is dropped, and the turn goes on without it. Under a flavor whose
 * client cancels by leaving, its reader going away (the stream cancelled or dropped, or the
 * request aborted) aborts the execution as `left`.
 */
function turnStream(
  settings: ExecutionSettings,
  start: StartExecution,
  controller: AbortController,
): SseStream {
  const leave = () => {
    if (!controller.signal.aborted) controller.abort('left' satisfies AbortReason)
  }
  const { cancelsOnClose } = settings.rules
  if (start.stream) return start.stream
  const stream = createSseStream({
    pingMs: settings.pingMs,
    timers: settings.timers,
    maxQueuedBytes: turnQueueLimitBytes,
    ...(cancelsOnClose && { onCancel: leave, onOverflow: leave }),
  })
  if (cancelsOnClose) start.signal?.addEventListener('abort', leave, { once: true })
  return stream
}
