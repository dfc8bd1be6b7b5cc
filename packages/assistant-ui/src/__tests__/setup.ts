import { cleanup } from '@testing-library/react'
import { afterEach } from 'vitest'
// What the README's "Component tests (jsdom)" section asks users to add: the package's own setup.
import '@preview-chat/assistant-ui/testing'

// Vitest runs without globals, so testing-library cannot register its own cleanup.
afterEach(() => {
  cleanup()
  if (typeof sessionStorage !== 'undefined') sessionStorage.clear()
})
