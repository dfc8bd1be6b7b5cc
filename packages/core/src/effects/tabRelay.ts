import type { TurnEvent } from '../wire/contract/events'
import type { SessionEffects } from './context'
import type { Timers } from '../platform/environment'
import { lingering } from './linger'
import type { LiveTurn } from '../engine/fold'

/**
 * What tabs of one origin tell each other about live turns, so that a second tab follows a turn
 * token by token instead of snapshot by snapshot. `thread` identifies the thread; `seq` numbers the
 * event batches of one execution so a tab that missed one asks for the whole turn again.
 * `posting` says a tab has sent a message whose turn has not begun yet (`active: true`), or that
 * the message was not taken up (`active: false`): the other tabs hold their gate in between, which
 * matters on a server that accepts a second turn while one runs (the released n8n 2.41).
 */
export type RelayMessage =
  | { kind: 'posting'; thread: string; active: boolean }
  | { kind: 'turn'; thread: string; turn: LiveTurn; seq: number }
  | { kind: 'events'; thread: string; executionId: string; seq: number; events: TurnEvent[] }
  | { kind: 'sync'; thread: string; executionId: string }

/** A channel between the tabs of one origin (BroadcastChannel by default). */
export interface TabRelay {
  post(message: RelayMessage): void
  /** Receives the other tabs' messages; returns the function that stops. */
  listen(listener: (message: RelayMessage) => void): () => void
}

/**
 * The relay over `BroadcastChannel`, named by `scope` (e.g. the user id) so that two users of one
 * browser never see each other's turns. The channel opens with the first listener and closes a
 * moment after the last one leaves; nothing is touched before that (SSR-safe). Where the browser
 * has no BroadcastChannel, tabs fall back to history reads.
 */
export function broadcastChannelRelay(scope: string, timers: Timers, lingerMs: number): TabRelay {
  let channel: BroadcastChannel | null = null
  const listeners = new Set<(message: RelayMessage) => void>()
  const open = lingering(
    () => {
      if (typeof BroadcastChannel === 'undefined') return () => {}
      const opened = new BroadcastChannel(`preview-chat:${scope}`)
      opened.onmessage = (event: MessageEvent<RelayMessage>) =>
        listeners.forEach((listener) => listener(event.data))
      channel = opened
      return () => {
        opened.close()
        channel = null
      }
    },
    timers,
    lingerMs,
  )
  return {
    post(message) {
      try {
        channel?.postMessage(message)
      } catch {
        // A message that cannot be cloned (an exotic tool output) is skipped; reads still converge.
      }
    },
    listen(listener) {
      listeners.add(listener)
      const release = open.acquire()
      return () => {
        listeners.delete(listener)
        release()
      }
    },
  }
}

/**
 * Another tab's message about this thread. The reducer decides what to take; this answers a
 * tab that asks for the whole of the turn this tab streams, and asks for it when the reducer
 * found a batch missing (a tab that joined mid-turn, or missed one).
 */
export function followRelay(message: RelayMessage, effects: SessionEffects): void {
  if (message.thread !== effects.relayThread) return
  const before = effects.getState()
  const { own, live } = before
  if (message.kind === 'sync') {
    if (own?.phase === 'streaming' && live?.executionId === message.executionId)
      effects.relay({ kind: 'turn', thread: message.thread, turn: live, seq: own.batches })
    return
  }
  effects.dispatch({
    type: 'relay-received',
    message,
    at: effects.at(),
    stampedAt: effects.stampedAt(),
  })
  const { syncAsked } = effects.getState()
  if (syncAsked && syncAsked !== before.syncAsked)
    effects.relay({ kind: 'sync', thread: message.thread, executionId: syncAsked })
}
