/**
 * `@preview-chat/assistant-ui/testing`: what jsdom lacks for assistant-ui's primitives, for a
 * component test's `setupFiles`. Each is a no-op defined only where it is missing, so a real
 * browser (Vitest's browser mode) keeps its own.
 *
 * - `ResizeObserver`: the thread viewport observes its content's size to follow a growing answer.
 * - `Element.prototype.scrollTo`: the viewport scrolls to the bottom with it.
 */
globalThis.ResizeObserver ??= class ResizeObserver {
  observe() {}
  unobserve() {}
  disconnect() {}
}

if (typeof Element !== 'undefined') Element.prototype.scrollTo ??= function scrollTo() {}

export {}
