// The msw kit's Storybook loader, configured for these stories. .storybook/ sits outside this
// package, where pnpm installed the kit, so its preview imports the loader through here.
import { previewChatLoader } from '@preview-chat/msw/storybook'

/**
 * Every story gets a fresh reference backend in msw's service worker (started once), as the msw
 * kit's README sets it up; a story's `parameters.previewChat` (`scenario(…)`) seeds it. Requests
 * that name no user act as alice (the stories' client sends no credentials); push goes over SSE.
 * The backend is paced to be watched in the Storybook UI and still quick in tests.
 */
export const backendLoader = previewChatLoader({
  user: 'alice',
  websocketPush: false,
  deltaMs: 30,
  snapshotMs: 40,
  // The worker is served from the installed msw by .storybook/main.ts, at the site's base.
  start: { serviceWorker: { url: `${import.meta.env.BASE_URL}mockServiceWorker.js` } },
})
