import { createPreviewChatHandlers, type PreviewChatMock } from '@preview-chat/msw'
import type { RequestHandler } from 'msw'
import { setupWorker, type SetupWorker } from 'msw/browser'

/** Timing of the mocked backend: slow enough to watch in the Storybook UI, quick in tests. */
const timing = { deltaMs: 30, snapshotMs: 40 }

let worker: Promise<SetupWorker> | undefined
let current: PreviewChatMock | undefined

/** One service worker for the whole page, started on the first story that needs it. */
function startWorker(): Promise<SetupWorker> {
  worker ??= (async () => {
    const started = setupWorker()
    await started.start({
      // Storybook's own requests (modules, HMR) go to the network.
      onUnhandledRequest: 'bypass',
      quiet: true,
      serviceWorker: { url: `${import.meta.env.BASE_URL}mockServiceWorker.js` },
    })
    return started
  })()
  return worker
}

/**
 * A fresh reference backend for one story, mounted in the page's service worker; the previous
 * story's backend is closed (its running turns end, its push streams close). Requests that name
 * no user act as alice, as the stories' client sends no credentials.
 */
export async function mountBackend(extraHandlers: RequestHandler[] = []): Promise<PreviewChatMock> {
  const started = await startWorker()
  const previous = current
  current = undefined
  await previous?.close()
  // A cookie left by the example app on this host would name its user instead of the mock's.
  document.cookie = 'preview-chat-user=; max-age=0; path=/'
  const mock = createPreviewChatHandlers({ user: 'alice', websocketPush: false, ...timing })
  started.resetHandlers(...extraHandlers, ...mock.handlers)
  current = mock
  return mock
}

/** Prepends story-only handlers (e.g. one that holds a request) in front of the backend's. */
export async function useHandlers(...handlers: RequestHandler[]): Promise<void> {
  ;(await startWorker()).use(...handlers)
}
