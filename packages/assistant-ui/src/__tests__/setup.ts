import { cleanup, configure } from '@testing-library/react'
import { afterEach } from 'vitest'
// What the README's "Component tests (jsdom)" section asks users to add: the package's own setup.
import '@preview-chat/assistant-ui/testing'

// `waitFor` and `findBy…` wait only as long as it takes; their default bound (1 s) is a guess at
// the machine's speed, which a loaded 2-core machine misses (issue 27, row h). A backstop, not a
// figure a test depends on.
configure({ asyncUtilTimeout: 10_000 })

// Vitest runs without globals, so testing-library cannot register its own cleanup.
afterEach(() => {
  cleanup()
  if (typeof sessionStorage !== 'undefined') sessionStorage.clear()
})
