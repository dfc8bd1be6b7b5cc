import type { RelayMessage } from '../engine/relay'
import { relayPart } from '../engine/slices/relay'
import type { Timers } from '../platform/environment'
import type { SessionExtension } from './context'
import { lingering } from './linger'

/**
 * A channel between the tabs of one origin (BroadcastChannel by default). What it delivers is
 * whatever another tab (or anything else on the channel) posted: the engine parses it.
 */
export interface TabRelay {
  post(message: RelayMessage): void
  /** Receives what the other tabs posted, unparsed; returns the function that stops. */
  listen(listener: (data: unknown) => void): () => void
}

/** What the client tells a relay adapter. */
export interface RelayContext {
  /** The client's `scope` (e.g. the user id; `''` when none): two scopes never share a channel. */
  scope: string
  timers: Timers
  /** How long the channel stays open after its last listener leaves (the client's `lingerMs`). */
  lingerMs: number
}

/** A relay the client makes for its own scope and timers. */
export type RelayAdapter = (context: RelayContext) => TabRelay

/**
 * A relay adapter that brings the engine's part reading the other tabs: what `tabRelay()` and
 * `broadcastChannelRelay()` return, and the only relay `createMinimalPreviewChatClient` takes.
 */
export interface RelayWithPart extends RelayAdapter {
  /** The engine's part, set by `tabRelay()`: not a value to make by hand. */
  readonly enginePart: object
  /** The relay's part of a session, for the relay this adapter made; set by `tabRelay()`. */
  readonly sessionPart: object
}

/**
 * The relay over `BroadcastChannel` (`relay: broadcastChannelRelay()`), named by the client's
 * `scope` (e.g. the user id) so that two users of one browser never see each other's turns. The
 * channel opens with the first listener and closes a moment after the last one leaves; nothing is
 * touched before that (SSR-safe). Where the browser has no BroadcastChannel, tabs fall back to
 * history reads.
 */
export function broadcastChannelRelay(): RelayWithPart {
  return tabRelay(({ scope, timers, lingerMs }) => broadcastChannel(scope, timers, lingerMs))
}

/**
 * A relay of the app's own (a `TabRelay`, or an adapter that makes one per client) as the client
 * takes it: `createMinimalPreviewChatClient({ relay: tabRelay(myRelay) })`. It brings the engine's
 * part that reads what the other tabs say (their posting holds, their live turns), which a client
 * without a relay does not carry. `createPreviewChatClient` wraps a relay given to it by itself.
 */
export function tabRelay(relay: TabRelay | RelayAdapter): RelayWithPart {
  const adapter: RelayAdapter =
    typeof relay === 'function' ? (context) => relay(context) : () => relay
  return Object.assign(adapter, { enginePart: relayPart, sessionPart: relayExtension })
}

/**
 * The relay's part of a session a relay adapter brings (`tabRelay`), made for the relay the
 * adapter made; `undefined` for a bare adapter (a caller in JavaScript, or past the types: the
 * client refuses it with a typed error). Read from the adapter, never imported by the client, so
 * that a client without a relay carries none of the relay's code.
 */
export function relaySessionPart(
  adapter: unknown,
): ((relay: TabRelay) => SessionExtension) | undefined {
  return (adapter as Partial<{ sessionPart: (relay: TabRelay) => SessionExtension }>).sessionPart
}

function broadcastChannel(scope: string, timers: Timers, lingerMs: number): TabRelay {
  let channel: BroadcastChannel | null = null
  const listeners = new Set<(data: unknown) => void>()
  const open = lingering(
    () => {
      if (typeof BroadcastChannel === 'undefined') return () => {}
      const opened = new BroadcastChannel(`preview-chat:${scope}`)
      opened.onmessage = (event: MessageEvent<unknown>) => {
        for (const listener of listeners) {
          try {
            listener(event.data)
          } catch {
            // One listener's failure must not keep the message from the others.
          }
        }
      }
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
      // Open for the post: a session nobody listens to yet (a `submit()` before any subscriber)
      // still tells the other tabs it posts, or their gate stays open (R-GATE-POSTING).
      const release = open.acquire()
      try {
        channel?.postMessage(message)
      } catch {
        // A message that cannot be cloned (an exotic tool output) is skipped; reads still converge.
      } finally {
        release()
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
 * The relay's part of a session (`SessionExtension`), for the client's relay: its part of the
 * engine (`relayPart`) and its side of the host, which posts the relay messages the part makes and,
 * while the session is listened to, hands what the other tabs say to the engine (parsed there).
 */
function relayExtension(relay: TabRelay): SessionExtension {
  return {
    enginePart: relayPart,
    attach: (dispatch, context) => ({
      perform(command) {
        if (command.type === 'relay') relay.post(command.message)
      },
      listen: () =>
        relay.listen((data) =>
          dispatch({
            type: 'relay-received',
            data,
            at: context.timers.now(),
            stampedAt: context.now(),
          }),
        ),
    }),
  }
}
