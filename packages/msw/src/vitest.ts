/**
 * `setupServer` (from `msw/node`) wired to the Vitest lifecycle in one call. This entry, unlike the
 * main one, imports `msw/node` and `vitest`: use it in Node tests only.
 */
import { setupServer, type SetupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import {
  createPreviewChatHandlers,
  type PreviewChatHandlersOptions,
  type PreviewChatMock,
} from './handlers'

/** Options of `setupPreviewChatServer`: the handlers' options, plus MSW's for unhandled requests. */
export interface SetupPreviewChatServerOptions extends PreviewChatHandlersOptions {
  /** What MSW does with a request no handler answers; `'error'` by default (fail the test). */
  onUnhandledRequest?: 'error' | 'warn' | 'bypass'
}

/** What `setupPreviewChatServer` returns; read `mock` inside a test (it is fresh in each one). */
export interface PreviewChatTestServer {
  /** The MSW server; `server.use(...)` adds handlers for one test. */
  readonly server: SetupServer
  /**
   * This test's mock: a fresh backend and fresh scenario controls for every test, so request
   * counts and threads never leak between tests. Throws outside a test.
   */
  readonly mock: PreviewChatMock
}

/**
 * Starts an MSW server with the preview-chat handlers for this test file: `listen` before all
 * tests, a fresh mock (backend and controls) before each, and after each its backend closed and
 * the handlers reset; `close` after all. Call it at the top level of a test file.
 *
 * @example
 * const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })
 *
 * it('recovers', async () => {
 *   void chat.mock.cutNextStream({ afterEvents: 2 })
 *   // … drive a client at http://localhost/rest …
 * })
 */
export function setupPreviewChatServer(
  options: SetupPreviewChatServerOptions = {},
): PreviewChatTestServer {
  const { onUnhandledRequest = 'error', ...handlerOptions } = options
  const server = setupServer()
  let current: PreviewChatMock | undefined

  beforeAll(() => {
    // msw/node intercepts Node's requests; in a browser run (Vitest browser mode) use
    // createPreviewChatHandlers with msw/browser's setupWorker instead.
    if (typeof process === 'undefined' || !process.versions?.node) {
      throw new Error(
        'setupPreviewChatServer runs in Node (msw/node). In a browser, start createPreviewChatHandlers(…).handlers with setupWorker from msw/browser.',
      )
    }
    server.listen({ onUnhandledRequest })
  })
  beforeEach(() => {
    current = createPreviewChatHandlers(handlerOptions)
    server.use(...current.handlers)
  })
  afterEach(async () => {
    // Components unmount before their backend goes away, with or without Vitest's globals
    // (Testing Library registers its own cleanup only when `afterEach` is a global).
    await cleanupTestingLibrary()
    server.resetHandlers()
    const ending = current
    current = undefined
    await ending?.close()
  })
  afterAll(() => server.close())

  return {
    server,
    get mock() {
      if (!current) {
        throw new Error(
          'The preview-chat mock exists only while a test runs: read `chat.mock` inside it() or a beforeEach/afterEach hook.',
        )
      }
      return current
    },
  }
}

/** Unmounts what `@testing-library/react` rendered, when the test file uses it. */
async function cleanupTestingLibrary(): Promise<void> {
  if (typeof document === 'undefined') return
  const name = '@testing-library/react'
  try {
    const library = (await import(/* @vite-ignore */ name)) as { cleanup?: () => void }
    library.cleanup?.()
  } catch {
    // Not installed: nothing was rendered with it.
  }
}
