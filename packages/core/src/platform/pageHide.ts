/**
 * The page being left — closed, reloaded, navigated away from, or put in the back-forward cache:
 * the browser's `pagehide`. The one place the core hears it (what is not written yet is written
 * then); a no-op where there is no page (a server render, Node).
 */

/** What `pagehide` is heard on: the page's `window` by default; a test's stand-in. */
export type PageHideTarget = Pick<EventTarget, 'addEventListener' | 'removeEventListener'>

/**
 * Calls `listener` each time the page is left (`pagehide`), heard on `target` (default: the
 * global scope, read now, so that a server has none). Returns the function that stops listening.
 */
export const onPageHide = (
  listener: () => void,
  target = globalThis as Partial<PageHideTarget>,
): (() => void) => {
  target.addEventListener?.('pagehide', listener)
  return () => target.removeEventListener?.('pagehide', listener)
}
