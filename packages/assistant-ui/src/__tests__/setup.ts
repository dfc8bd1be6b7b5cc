import { cleanup } from '@testing-library/react'
import { afterEach } from 'vitest'

// Vitest runs without globals, so testing-library cannot register its own cleanup.
afterEach(() => {
  cleanup()
  if (typeof sessionStorage !== 'undefined') sessionStorage.clear()
})

// jsdom has no ResizeObserver; assistant-ui's viewport observes its content's size with one.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
}
// Nor scrollTo, which the viewport calls to follow a growing answer.
Element.prototype.scrollTo ??= function scrollTo() {}
