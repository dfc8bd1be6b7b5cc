/**
 * `BroadcastChannel` as a browser runs it (HTML, "Broadcasting to other browsing contexts"),
 * where a stub that calls the listener at once is kinder:
 *
 * - a message reaches every *other* open channel of the same name on the same origin (the other
 *   tabs', and this tab's other objects), never the channel that posted it;
 * - delivery is asynchronous: each receiver gets its `message` event (a `MessageEvent`) a task
 *   later, in the order posted;
 * - structured-clone semantics: each receiver gets its own copy (`structuredClone`), so a change
 *   to the posted object after `postMessage` is not seen, and a function or a symbol cannot be
 *   posted (`DataCloneError`, thrown by `postMessage`);
 * - `postMessage` on a closed channel throws an `InvalidStateError`; a closed channel, or one of
 *   a closed tab, receives nothing, not even a message already on its way.
 *
 * ```ts
 * const net = broadcastNetwork()
 * const A = net.tab(), B = net.tab() // a constructor per tab
 * vi.stubGlobal('BroadcastChannel', A.BroadcastChannel) // while tab A's code is made
 * ```
 */

type Listener = ((this: BroadcastChannel, event: MessageEvent) => unknown) | null

/** One tab's `BroadcastChannel` constructor, and what closes every channel it made. */
export interface BroadcastTab {
  readonly BroadcastChannel: typeof BroadcastChannel
  /** The channels it opened and has not closed. */
  open(): BroadcastChannel[]
  /** The tab is gone: its channels are closed (messages on their way to them are lost). */
  close(): void
}

export interface BroadcastNetwork {
  /** A tab of the origin. */
  tab(): BroadcastTab
  /** Every message posted so far, by channel name, as posted (copies). */
  readonly posted: { name: string; data: unknown }[]
}

export function broadcastNetwork(): BroadcastNetwork {
  const channels = new Set<Channel>()
  const posted: { name: string; data: unknown }[] = []

  class Channel extends EventTarget {
    readonly name: string
    onmessage: Listener = null
    onmessageerror: Listener = null
    closed = false
    constructor(
      name: string,
      readonly owner: Set<Channel>,
    ) {
      super()
      this.name = String(name)
      channels.add(this)
      owner.add(this)
    }
    postMessage(message: unknown): void {
      if (this.closed)
        throw new DOMException(
          "Failed to execute 'postMessage' on 'BroadcastChannel': Channel is closed",
          'InvalidStateError',
        )
      // Serialized at once, as the browser does: a later change to `message` is not sent, and
      // what cannot be cloned throws here (a DataCloneError).
      const serialized = structuredClone(message)
      posted.push({ name: this.name, data: structuredClone(serialized) })
      for (const receiver of channels) {
        if (receiver === this || receiver.name !== this.name) continue
        globalThis.setTimeout(() => {
          if (receiver.closed) return
          const event = new MessageEvent('message', { data: structuredClone(serialized) })
          receiver.onmessage?.call(receiver as unknown as BroadcastChannel, event)
          receiver.dispatchEvent(event)
        }, 0)
      }
    }
    close(): void {
      this.closed = true
      channels.delete(this)
      this.owner.delete(this)
    }
  }

  return {
    tab() {
      const mine = new Set<Channel>()
      class TabChannel extends Channel {
        constructor(name: string) {
          super(name, mine)
        }
      }
      return {
        BroadcastChannel: TabChannel as unknown as typeof BroadcastChannel,
        open: () => [...mine] as unknown as BroadcastChannel[],
        close() {
          for (const channel of [...mine]) channel.close()
        },
      }
    },
    posted,
  }
}
