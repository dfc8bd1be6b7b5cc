/**
 * The client's own relay (`broadcastChannelRelay()`) in one tab of the world: its channel is that
 * tab's `BroadcastChannel` stand-in (a message a task later, a copy, never to the sender), whenever
 * it opens — with the first listener, and again after it lingered closed. In a browser each page's
 * code sees its own window's constructor; here the global is the tab's only while the relay runs
 * (`listen`, which opens the channel, and `post`), so that tabs made one after another keep theirs.
 *
 * ```ts
 * const net = broadcastNetwork()
 * const a = createPreviewChatClient({ relay: relayIn(net.tab()), … })
 * const b = createPreviewChatClient({ relay: relayIn(net.tab()), … })
 * ```
 */
import { broadcastChannelRelay, tabRelay, type RelayWithPart } from '../../index'

type TabOfChannels = { readonly BroadcastChannel: typeof BroadcastChannel }

export function relayIn(tab: TabOfChannels): RelayWithPart {
  const relay = broadcastChannelRelay()
  return tabRelay((context) => {
    const made = relay(context)
    return {
      post: (message) => inTab(tab, () => made.post(message)),
      listen: (listener) => inTab(tab, () => made.listen(listener)),
    }
  })
}

/** Runs `open` with `tab`'s `BroadcastChannel` as the global one, then puts back what was there. */
function inTab<T>(tab: TabOfChannels, open: () => T): T {
  const before = Object.getOwnPropertyDescriptor(globalThis, 'BroadcastChannel')
  Object.defineProperty(globalThis, 'BroadcastChannel', {
    value: tab.BroadcastChannel,
    configurable: true,
    writable: true,
  })
  try {
    return open()
  } finally {
    if (before) Object.defineProperty(globalThis, 'BroadcastChannel', before)
    else delete (globalThis as { BroadcastChannel?: unknown }).BroadcastChannel
  }
}
