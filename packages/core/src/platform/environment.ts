/**
 * The outside world of the engine — timers, the clock, page visibility, connectivity and storage —
 * injected so that tests drive it step by step, and touched lazily so that importing the engine on
 * a server (SSR) reaches for no `window`, `document` or `sessionStorage`.
 */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
  /** A monotonic clock in ms, on the timers' time line (fake timers move it too). */
  now(): number
}

/** Calls back when the page becomes visible again or the browser comes back online. */
export type ResumeSignal = (callback: () => void) => () => void

/** Where drafts are kept between reloads (sessionStorage by default). */
export interface DraftStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

export const defaultTimers: Timers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => performance.now(),
}

/** Visibility and connectivity changes of a browser page; a no-op elsewhere. */
export const browserResumeSignal: ResumeSignal = (callback) => {
  if (typeof window === 'undefined' || typeof document === 'undefined') return () => {}
  const page = document
  const browser = window
  const onVisibility = () => {
    if (page.visibilityState === 'visible') callback()
  }
  page.addEventListener('visibilitychange', onVisibility)
  browser.addEventListener('online', callback)
  return () => {
    try {
      page.removeEventListener('visibilitychange', onVisibility)
      browser.removeEventListener('online', callback)
    } catch {
      // The page is gone already (a closed window, a torn-down test DOM): nothing to remove.
    }
  }
}

/** sessionStorage when the page has one and allows it (it throws in some privacy modes). */
export function defaultDraftStorage(): DraftStorage | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage
  } catch {
    return null
  }
}


/**
 * Draft storage that never throws: the first failure of `storage` (Safari's private mode, a
 * sandboxed iframe, a full quota) moves drafts to memory for good, with one warning.
 */
export function safeDraftStorage(
  storage: DraftStorage | null,
  warn: (message: string) => void,
): DraftStorage {
  const memory = new Map<string, string>()
  let backing = storage
  const attempt = <T>(use: (store: DraftStorage) => T, fallback: () => T): T => {
    if (backing) {
      try {
        return use(backing)
      } catch (cause) {
        backing = null
        warn(
          `Drafts are kept in memory only: the browser refused its storage (${cause instanceof Error ? cause.message : String(cause)}).`,
        )
      }
    }
    return fallback()
  }
  return {
    getItem: (key) =>
      attempt(
        (store) => store.getItem(key),
        () => memory.get(key) ?? null,
      ),
    setItem: (key, value) =>
      attempt(
        (store) => store.setItem(key, value),
        () => void memory.set(key, value),
      ),
    removeItem: (key) =>
      attempt(
        (store) => store.removeItem(key),
        () => void memory.delete(key),
      ),
  }
}
