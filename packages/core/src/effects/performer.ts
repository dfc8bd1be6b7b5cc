/**
 * The session's side of the outside world: it performs the reducer's commands (requests, turn
 * streams, storage, the outcomes owed to the app; a part's, through its host) and, while the
 * session is followed, listens (the history query, push, resume signals, the parts' hosts: the
 * relay's); what comes of either is dispatched as an action. It decides nothing.
 */
import type { Command, EngineAction, StopResult, SubmitResult, TurnEnding } from '../engine/model'
import {
  describeValue,
  failureRecord,
  fromErrorRecord,
  toErrorRecord,
  type ErrorRecord,
} from '../wire/contract/errors'
import { readTurnStream, type ThreadKey } from '../wire/transport'
import { readPushMessage } from '../wire/contract/push'
import { pushIgnored } from '../wire/pushSource'
import { knownHere } from '../platform/environment'
import type { ExtensionPart, SessionContext } from './context'
import type { HistoryQuery } from './historyQuery'

/** A session's performer (`createPerformer`). */
export interface Performer {
  /** Performs one command of the reducer's; what comes of it is dispatched as an action. */
  perform(command: Command): void
  /** Starts listening (the session is followed); returns the function that goes quiet again. */
  activate(): () => void
}

/**
 * The performer of one session's commands, and its listening while the session is followed.
 *
 * @param key - the session's thread
 * @param ctx - what the session has from its client (transport, storage, push, timers)
 * @param history - the thread's history query (`read`, `cancel-read`; observed while followed)
 * @param hosts - the session's side of each of the client's parts (the relay's, the queue's): each
 *   performs its own commands, and listens while the session is listened to
 * @param dispatch - where what came of a command, or what was heard, goes: the runner
 * @param owed - the outcomes owed to the app's calls, by request id (settled here)
 * @param endings - who hears how each turn ended (`onTurnEnd`)
 * @param now - the session's clock (its timers' time line)
 */
export function createPerformer(
  key: ThreadKey,
  ctx: SessionContext,
  history: HistoryQuery,
  hosts: readonly ExtensionPart[],
  dispatch: (action: EngineAction) => void,
  owed: Map<number, (result: never) => void>,
  endings: Set<(ending: TurnEnding) => void>,
  now: () => number,
): Performer {
  const { transport } = ctx
  /** The open turn streams of this tab, by their POST's token; the Stop request in flight. */
  const streams = new Map<number, AbortController>()
  let stopRequest: AbortController | null = null

  const settle = (request: number, result: SubmitResult | StopResult | undefined) => {
    const resolve = owed.get(request)
    owed.delete(request)
    resolve?.(result as never)
  }
  const stopSignal = () => (stopRequest = new AbortController()).signal

  /** Posts a turn request and reads its stream into the reducer, tagged with `token`. */
  const post = (token: number, request: Parameters<SessionContext['transport']['openTurn']>[1]) => {
    const controller = new AbortController()
    streams.set(token, controller)
    const ended = (action: EngineAction) => {
      streams.delete(token)
      dispatch(action)
    }
    transport.openTurn(key, request, controller.signal).then(
      ({ body, capabilities }) => {
        dispatch({ type: 'turn-opened', token, capabilities })
        void readTurnStream(
          body,
          (events) =>
            dispatch({ type: 'turn-events', token, events, at: now(), stampedAt: ctx.now() }),
          controller.signal,
          ctx.warn,
        ).then((end) =>
          ended({
            type: 'stream-ended',
            token,
            end: end.kind === 'cut' ? { kind: 'cut', error: toErrorRecord(end.error) } : end,
          }),
        )
      },
      (cause: unknown) =>
        ended({
          type: 'post-failed',
          token,
          error: failureRecord(cause, 'network_error', 'Sending the message got no answer'),
        }),
    )
  }

  const perform = (command: Command): void => {
    switch (command.type) {
      case 'post':
        return post(command.token, command.request)
      case 'close-stream':
        return streams.get(command.token)?.abort()
      case 'stop-execution': {
        const { executionId } = command
        transport.stopExecution(key, executionId, stopSignal()).then(
          (answer) => dispatch({ type: 'stop-answered', executionId, ...answer }),
          (cause: unknown) =>
            dispatch({
              type: 'stop-failed',
              executionId,
              error: failureRecord(cause, 'network_error', 'Stop got no answer'),
              at: now(),
            }),
        )
        return
      }
      case 'cancel-runs': {
        const signal = stopSignal()
        Promise.all(command.runIds.map((runId) => transport.cancelRun(key, runId, signal))).then(
          (answers) =>
            dispatch({ type: 'runs-answered', cancelled: answers.some((a) => a.cancelled) }),
          (cause: unknown) =>
            dispatch({
              type: 'runs-failed',
              error: failureRecord(cause, 'network_error', 'Cancelling the suspended run failed'),
            }),
        )
        return
      }
      case 'abort-stop':
        return stopRequest?.abort()
      case 'cancel-read':
        return history.cancel()
      case 'read':
        return history.read()
      case 'forget-kept':
        return ctx.forgetKept?.()
      case 'settle-refresh':
        for (const request of command.requests) settle(request, undefined)
        return
      case 'set-alarm':
        // The runner's own (never handed to a performer).
        return
      case 'keep-live':
        return ctx.keepLive?.(command.turn)
      case 'store-draft': {
        const { draftKey, storage } = ctx
        for (const [stored, value] of [
          [draftKey, command.draft],
          [`${draftKey}:sent`, command.sentAs],
        ] as const)
          if (value) storage.setItem(stored, value)
          else storage.removeItem(stored)
        return
      }
      case 'settle-submit':
        return settle(command.request, withPublicError(command.result) as SubmitResult)
      case 'settle-stop':
        for (const request of command.requests)
          settle(request, withPublicError(command.result) as StopResult)
        return
      case 'turn-ended': {
        const ending = withPublicError(command.ending) as TurnEnding
        for (const listener of endings) {
          try {
            listener(ending)
          } catch (cause) {
            dispatch({
              type: 'listener-threw',
              listener: 'turn-end',
              message: describeValue(cause),
            })
          }
        }
        return
      }
      case 'warn':
        return ctx.warn(command.message)
      default:
        // (`act` is the runner's own, never handed to a performer.)
        // A part's command (the relay's, the queue's): its host performs it.
        for (const host of hosts) host.perform(command)
    }
  }

  const activate = (): (() => void) => {
    // Observed first: a read the reducer starts on activation goes through the observer.
    const cleanups = [
      history.observe(),
      ctx.listenToPush({
        onMessage: (value) => {
          // Checked here, as anything from outside is (a message read before is known at once).
          const parsed = readPushMessage(value)
          if (parsed.kind === 'message') dispatch({ type: 'push-message', message: parsed.message })
          else if (parsed.kind === 'invalid') ctx.warn(pushIgnored(parsed.error))
        },
        onConnectionChange: (connected) =>
          dispatch({ type: 'push-changed', connected, at: now(), random: ctx.random() }),
      }),
      ctx.resumeSignal(() => dispatch({ type: 'read-wanted', urgent: false })),
      ...hosts.map((host) => host.listen?.() ?? (() => {})),
    ]
    dispatch({ type: 'activated', at: now(), pushConnected: ctx.pushConnected() })
    // `isNew` is used up once a session is followed, not when one is made: a render React throws
    // away before its commit (hydration that suspends, a transition retried) makes a client and a
    // session again, and the retry is still the first mount.
    knownHere(ctx.knownKey, true)
    return () => {
      // Quiet first: what the cleanups cause (an observer's leaving aborts its fetch) starts nothing.
      dispatch({ type: 'deactivated' })
      for (const cleanup of cleanups) cleanup()
      history.close()
      ctx.onIdle()
    }
  }

  return { perform, activate }
}

/** The engine's results carry error records; the app gets each as its `PreviewChatError`. */
function withPublicError(
  result: SubmitResult<ErrorRecord> | StopResult<ErrorRecord> | TurnEnding<ErrorRecord>,
) {
  const { error } = result as { error?: ErrorRecord | null }
  return (error ? { ...result, error: fromErrorRecord(error) } : result) as unknown
}
