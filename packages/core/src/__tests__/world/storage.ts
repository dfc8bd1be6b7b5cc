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
 * - values are strings: `setItem('n', 1)` keeps `'1'`;
 * - `sessionStorage` is each tab's own area: kept across its reloads, seen by no other tab, with no
 *   `storage` event, under the same quota rule (`itemsOf` lists what a page could read of either).
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

/** One tab's view of the origin's storage: its `localStorage`, its `sessionStorage`, its window. */
export interface StorageTab {
  readonly localStorage: Storage
  /**
   * This tab's own area (HTML: one per top-level browsing context and origin): kept across the
   * tab's reloads (a new page over the same `sessionStorage`), never seen by another tab, no
   * `storage` event to any; the same quota rule as `localStorage`, counted on its own.
   */
  readonly sessionStorage: Storage
  /** Where this tab hears the other tabs' writes (`storage` events). */
  readonly window: EventTarget
  /** The tab is gone: it hears nothing more, and its `localStorage` and `sessionStorage` throw. */
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

/**
 * Every key a page could read from `storage` (`key(i)` up to `length`) and its value, in a new map:
 * what a test looks at of a storage, through nothing a browser's page lacks.
 */
export function itemsOf(storage: Storage): Map<string, string> {
  const items = new Map<string, string>()
  for (let i = 0; i < storage.length; i++) {
    const name = storage.key(i)
    const value = name === null ? null : storage.getItem(name)
    if (name !== null && value !== null) items.set(name, value)
  }
  return items
}

/**
 * One storage area (its items, the code units they take, its quota) as a `Storage`: `live()`
 * throws when the tab using it is gone, `changed` hears each change (for the `storage` events).
 */
function storageArea(
  quota: number,
  live: () => void,
  changed: (from: Storage, key: string | null, old: string | null, value: string | null) => void,
  items = new Map<string, string>(),
  usage = { used: 0 },
): Storage {
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
      const next = usage.used - (old === null ? 0 : sizeOf(name, old)) + sizeOf(name, text)
      if (next > quota)
        throw new DOMException(
          `Failed to execute 'setItem' on 'Storage': Setting the value of '${name}' exceeded the quota.`,
          'QuotaExceededError',
        )
      items.set(name, text)
      usage.used = next
      changed(storage, name, old, text)
    },
    removeItem(key: string) {
      live()
      const name = String(key)
      const old = items.get(name)
      if (old === undefined) return
      items.delete(name)
      usage.used -= sizeOf(name, old)
      changed(storage, name, old, null)
    },
    clear() {
      live()
      if (items.size === 0) return
      items.clear()
      usage.used = 0
      changed(storage, null, null, null)
    },
  }
  return storage
}

export function storageOrigin(options: StorageOriginOptions = {}): StorageOrigin {
  const quota = options.quota ?? 5_000_000
  const url = options.url ?? 'http://localhost/'
  const items = new Map<string, string>()
  const usage = { used: 0 }
  const tabs = new Set<{ window: EventTarget; storage: Storage }>()

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
            'This tab was closed: its storage is gone (a test used a tab after closing it).',
            'InvalidStateError',
          )
      }
      const storage = storageArea(quota, live, tell, items, usage)
      const entry = { window, storage }
      tabs.add(entry)
      return {
        localStorage: storage,
        sessionStorage: storageArea(quota, live, () => {}),
        window,
        close() {
          closed = true
          tabs.delete(entry)
        },
      }
    },
    entries: () => Object.fromEntries(items),
    used: () => usage.used,
  }
}
