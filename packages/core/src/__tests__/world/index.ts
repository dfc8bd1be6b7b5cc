/**
 * The tests' browser: stand-ins that behave as browsers do, where hand-written fakes were kinder
 * (issue 35: the faults lived in the difference). Each file says what browser behaviour it
 * reproduces; `browserOrigin()` ties the per-origin ones into tabs that share an origin's storage,
 * channels, locks and databases, and that can close between two callbacks. `relayIn(tab)`
 * (`relay.ts`) is the client's own `broadcastChannelRelay()` on one tab's channel.
 *
 * ```ts
 * const origin = browserOrigin()
 * const a = origin.openTab(), b = origin.openTab()
 * vi.stubGlobal('BroadcastChannel', a.BroadcastChannel) // while tab a's client is made
 * const store = indexedDbQueueStore(a.indexedDB)
 * queue({ store, locks: a.locks })
 * a.close() // pagehide, its channels closed, its locks released
 * ```
 */
import { broadcastNetwork, type BroadcastNetwork } from './broadcastChannel'
import { indexedDbWorld, type IndexedDbWorld } from './indexedDB'
import { lockOrigin, type LockManagerStandIn } from './locks'
import { storageOrigin, type StorageOrigin, type StorageOriginOptions } from './storage'

export { broadcastNetwork, type BroadcastNetwork, type BroadcastTab } from './broadcastChannel'
export { indexedDbWorld, type IndexedDbWorld } from './indexedDB'
export {
  lockOrigin,
  type LockLike,
  type LockManagerStandIn,
  type LockOptions,
  type LockOrigin,
  type LockTab,
} from './locks'
export {
  itemsOf,
  StorageEventLike,
  storageOrigin,
  type StorageOrigin,
  type StorageOriginOptions,
  type StorageTab,
} from './storage'
export {
  CloseEventLike,
  nextTask,
  webSocketWorld,
  type BrowserWebSocket,
  type WebSocketWorld,
  type WebSocketWorldOptions,
} from './webSocket'

/** One tab of an origin: the globals its code would read, and its end. */
export interface BrowserTab {
  readonly id: string
  /** Where `storage` and `pagehide` events reach this tab. */
  readonly window: EventTarget
  readonly localStorage: Storage
  /** This tab's own `sessionStorage` (kept across its reloads, seen by no other tab). */
  readonly sessionStorage: Storage
  readonly BroadcastChannel: typeof BroadcastChannel
  /** `navigator.locks`. */
  readonly locks: LockManagerStandIn
  /** The origin's `indexedDB` (shared by its tabs). */
  readonly indexedDB: IDBFactory
  readonly closed: boolean
  /**
   * The tab goes (closed, crashed, reloaded): `pagehide` on its window, then its channels close,
   * its locks are released, and its storage hears nothing more. What it had written stays.
   */
  close(): void
}

export interface BrowserOrigin {
  openTab(): BrowserTab
  readonly storage: StorageOrigin
  readonly channels: BroadcastNetwork
  /** The origin's databases, and the switches that make them refuse. */
  readonly idb: IndexedDbWorld
}

/** An origin's shared storage, channels, locks and IndexedDB, and its tabs. */
export function browserOrigin(options: { storage?: StorageOriginOptions } = {}): BrowserOrigin {
  const storage = storageOrigin(options.storage)
  const channels = broadcastNetwork()
  const locks = lockOrigin()
  const idb = indexedDbWorld()
  return {
    storage,
    channels,
    idb,
    openTab() {
      const window = new EventTarget()
      const stored = storage.tab(window)
      const channel = channels.tab()
      const locking = locks.tab()
      let closed = false
      return {
        id: locking.id,
        window,
        localStorage: stored.localStorage,
        sessionStorage: stored.sessionStorage,
        BroadcastChannel: channel.BroadcastChannel,
        locks: locking.locks,
        indexedDB: idb.indexedDB,
        get closed() {
          return closed
        },
        close() {
          if (closed) return
          window.dispatchEvent(new Event('pagehide'))
          closed = true
          channel.close()
          locking.close()
          stored.close()
        },
      }
    },
  }
}
