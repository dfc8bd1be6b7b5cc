/**
 * The outside world of the engine — timers, the clock, page visibility, connectivity and storage —
 * injected so that tests drive it step by step, and touched lazily so that importing the engine on
 * a server (SSR) reaches for no `window`, `document` or `sessionStorage`.
 */
import { describeValue } from '../wire/contract/errors'
import { explain } from '../wire/contract/explain'

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

/**
 * A random UUID (version 4): `crypto.randomUUID` where there is one; built from
 * `crypto.getRandomValues` where it is missing (a page served over plain HTTP, which is not a
 * secure context); from `Math.random` only where there is no `crypto` at all. What a message's
 * `messageId` and a tab's relay id are.
 */
export function randomUuid(): string {
  const crypto = globalThis.crypto as Crypto | undefined
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID()
  const bytes = new Uint8Array(16)
  if (typeof crypto?.getRandomValues === 'function') crypto.getRandomValues(bytes)
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256)
  // Version 4, variant 10 (RFC 9562): the high nibble of byte 6, the high bits of byte 8.
  const hex = Array.from(bytes, (byte, i) =>
    (i === 6 ? (byte & 0x0f) | 0x40 : i === 8 ? (byte & 0x3f) | 0x80 : byte)
      .toString(16)
      .padStart(2, '0'),
  ).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
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

/**
 * Whether this browser followed the thread stored under `knownKey` before (with `remember`:
 * remembers it first). `isNew` is a first-mount hint ("I just minted this id"): an app that keeps
 * it on (`?new=1` left in the URL) would otherwise skip the read on every later mount too (a
 * reload after the first answer, a second tab) and show a thread that has messages by now as
 * empty for good. Kept in localStorage, shared by the origin's tabs. Storage refused (privacy
 * modes) or absent (a server), or no key (no hint): `false`, and the hint is taken as given.
 */
export function knownHere(knownKey: string | undefined, remember?: true): boolean {
  if (!knownKey) return false
  try {
    const storage = globalThis.localStorage as Storage | undefined
    if (remember) storage?.setItem(knownKey, '1')
    return storage?.getItem(knownKey) != null
  } catch {
    return false // refused: a later mount takes the hint as given
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
 * Draft storage that never throws. A value the storage refuses (Safari's private mode, a sandboxed
 * iframe, a full quota for a 2 MB paste) is kept in memory for that key only, with one warning,
 * and the stale value stored before it is removed, so that a reload never brings back an older
 * draft; the next value that fits goes to the storage again.
 */
export function safeDraftStorage(
  storage: DraftStorage | null,
  warn: (message: string) => void,
): DraftStorage {
  const memory = new Map<string, string>()
  const refused = (cause: unknown) =>
    warn(
      `A draft is kept in memory only: the browser refused its storage (${describeValue(cause)}).${explain('draft-in-memory')}`,
    )
  const tryTo = (use: (store: DraftStorage) => void): boolean => {
    if (!storage) return false
    try {
      use(storage)
      return true
    } catch (cause) {
      refused(cause)
      return false
    }
  }
  return {
    getItem(key) {
      if (memory.has(key)) return memory.get(key) ?? null
      let value: string | null = null
      tryTo((store) => void (value = store.getItem(key)))
      // A storage of the app's own may answer anything: only a string is a draft.
      return typeof value === 'string' ? value : null
    },
    setItem(key, value) {
      if (tryTo((store) => store.setItem(key, value))) return void memory.delete(key)
      memory.set(key, value)
      tryTo((store) => store.removeItem(key))
    },
    removeItem(key) {
      memory.delete(key)
      tryTo((store) => store.removeItem(key))
    },
  }
}
