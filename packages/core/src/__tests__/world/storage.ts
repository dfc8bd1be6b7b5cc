/**
 * `localStorage` as a browser keeps it (HTML, "Web storage"), where a `Map` behind `getItem` is
 * kinder:
 *
 * - one storage area per origin, shared by every tab of it: what one tab writes, the others read
 *   at once;
 * - a `storage` event (`key`, `oldValue`, `newValue`, `url`, `storageArea`) on every *other* tab
 *   of the origin, a task later — never on the tab that wrote, never when nothing changed
 *   (`setItem` of the same value, `removeItem` of no item), one with `key: null` for `clear()`;
 * - a quota: a write that would take the area past it throws a `DOMException` named
 *   `QuotaExceededError` and changes nothing (browsers allow about 5 M UTF-16 code units per
 *   origin, keys and values counted; the default here);
 * - values are strings: `setItem('n', 1)` keeps `'1'`.
 *
 * ```ts
 * const origin = storageOrigin({ quota: 100 })
 * const a = origin.tab(), b = origin.tab()
 * b.window.addEventListener('storage', (event) => …) // a's writes, a task later
 * a.localStorage.setItem('k', 'v')
 * ```
 */

/** What a `storage` event carries; Node 20 has no global `StorageEvent`. */
export class StorageEventLike extends Event {
  readonly key: string | null
  readonly oldValue: string | null
  readonly newValue: string | null
  readonly url: string
  readonly storageArea: Storage
  constructor(init: {
    key: string | null
    oldValue: string | null
    newValue: string | null
    url: string
    storageArea: Storage
  }) {
    super('storage')
    this.key = init.key
    this.oldValue = init.oldValue
    this.newValue = init.newValue
    this.url = init.url
    this.storageArea = init.storageArea
  }
}

export interface StorageOriginOptions {
  /** Code units (keys and values) the area holds at most. Default 5,000,000. */
  quota?: number
  /** The page's URL, the events' `url`. Default `http://localhost/`. */
  url?: string
}

/** One tab's view of the origin's storage: its `localStorage` and the window its events reach. */
export interface StorageTab {
  readonly localStorage: Storage
  /** Where this tab hears the other tabs' writes (`storage` events). */
  readonly window: EventTarget
  /** The tab is gone: it hears nothing more, and its `localStorage` throws if used. */
  close(): void
}

export interface StorageOrigin {
  /** A new tab of the origin, sharing its storage area. */
  tab(window?: EventTarget): StorageTab
  /** What the area holds, key by key (a copy). */
  entries(): Record<string, string>
  /** Code units used so far. */
  used(): number
}

const sizeOf = (key: string, value: string) => key.length + value.length

export function storageOrigin(options: StorageOriginOptions = {}): StorageOrigin {
  const quota = options.quota ?? 5_000_000
  const url = options.url ?? 'http://localhost/'
  const items = new Map<string, string>()
  const tabs = new Set<{ window: EventTarget; storage: Storage }>()
  let used = 0

  /** Every other tab hears the change, a task later (as a browser queues it). */
  const tell = (
    from: Storage,
    key: string | null,
    oldValue: string | null,
    newValue: string | null,
  ) => {
    for (const tab of tabs) {
      if (tab.storage === from) continue
      const { window, storage } = tab
      globalThis.setTimeout(() => {
        if (!tabs.has(tab)) return
        window.dispatchEvent(
          new StorageEventLike({ key, oldValue, newValue, url, storageArea: storage }),
        )
      }, 0)
    }
  }

  return {
    tab(window = new EventTarget()) {
      let closed = false
      const live = () => {
        if (closed)
          throw new DOMException(
            'This tab was closed: its localStorage is gone (a test used a tab after closing it).',
            'InvalidStateError',
          )
      }
      const storage: Storage = {
        get length() {
          live()
          return items.size
        },
        key(index: number) {
          live()
          return [...items.keys()][index] ?? null
        },
        getItem(key: string) {
          live()
          return items.get(String(key)) ?? null
        },
        setItem(key: string, value: string) {
          live()
          const name = String(key)
          const text = String(value)
          const old = items.get(name) ?? null
          if (old === text) return
          const next = used - (old === null ? 0 : sizeOf(name, old)) + sizeOf(name, text)
          if (next > quota)
            throw new DOMException(
              `Failed to execute 'setItem' on 'Storage': Setting the value of '${name}' exceeded the quota.`,
              'QuotaExceededError',
            )
          items.set(name, text)
          used = next
          tell(storage, name, old, text)
        },
        removeItem(key: string) {
          live()
          const name = String(key)
          const old = items.get(name)
          if (old === undefined) return
          items.delete(name)
          used -= sizeOf(name, old)
          tell(storage, name, old, null)
        },
        clear() {
          live()
          if (items.size === 0) return
          items.clear()
          used = 0
          tell(storage, null, null, null)
        },
      }
      const entry = { window, storage }
      tabs.add(entry)
      return {
        localStorage: storage,
        window,
        close() {
          closed = true
          tabs.delete(entry)
        },
      }
    },
    entries: () => Object.fromEntries(items),
    used: () => used,
  }
}
