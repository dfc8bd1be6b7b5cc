/**
 * The preview-chat backend in Storybook: a loader for `.storybook/preview` that starts msw's
 * service worker once per page and gives every story a fresh backend (the previous story's is
 * closed: its running turns end, its push streams close), put in the story's state by the
 * story's own `setup`. Imports `msw/browser`: use it in the browser only. Storybook itself is not
 * imported, so any version whose loaders get `parameters` and hand `loaded` to render and play
 * works (7 and later).
 */
import type { RequestHandler } from 'msw'
import { setupWorker, type SetupWorker, type StartOptions } from 'msw/browser'
import {
  createPreviewChatHandlers,
  type PreviewChatHandlersOptions,
  type PreviewChatMock,
} from './handlers'
import {
  createPersistentPreviewChat,
  type PersistentPreviewChatMock,
  type PreviewChatStorage,
} from './persist'

/** Options of `previewChatLoader`: every story's mock options, and how the worker starts. */
export interface PreviewChatStorybookOptions extends PreviewChatHandlersOptions {
  /**
   * msw's `worker.start()` options. Default `{ onUnhandledRequest: 'bypass', quiet: true }`
   * (Storybook's own requests go to the network) and msw's worker URL, `/mockServiceWorker.js`
   * (what `npx msw init public/` writes, served by `staticDirs: ['../public']`).
   */
  start?: StartOptions
}

/** A story's `parameters.previewChat`. */
export interface PreviewChatParameters<Setup = unknown> {
  /** `false`: this story gets no backend (its requests go to the network). */
  enabled?: boolean
  /** This story's mock options, over the loader's (e.g. `{ user: 'bob' }`). */
  options?: Partial<PreviewChatHandlersOptions>
  /** msw handlers in front of the backend's, for this story (e.g. one that holds a request). */
  handlers?: RequestHandler[]
  /**
   * Puts the story's fresh backend in its state with the kit's seeders and controls
   * (`mock.seed.runningTurn()`, `mock.failNextReads(1)`, …) before the story renders; what it
   * returns is `loaded.previewChat.setup`.
   */
  setup?: (mock: PreviewChatMock) => Setup | Promise<Setup>
}

/** What a story's render and play functions get as `loaded.previewChat`. */
export interface LoadedPreviewChat<Setup = unknown> {
  /** The story's own backend and its scenario controls. */
  mock: PreviewChatMock
  /** What the story's `setup` returned (`undefined` without one). */
  setup: Setup
}

/** A Storybook loader (for `loaders` in `.storybook/preview`). */
export type PreviewChatLoader = (context: {
  parameters: Record<string, unknown>
}) => Promise<{ previewChat?: LoadedPreviewChat }>

let worker: Promise<SetupWorker> | undefined
let current: PreviewChatMock | undefined

/** The page's msw worker, started on first use (`worker.use(…)` adds handlers for a moment). */
export function previewChatWorker(start?: StartOptions): Promise<SetupWorker> {
  worker ??= (async () => {
    const started = setupWorker()
    await started.start({ onUnhandledRequest: 'bypass', quiet: true, ...start })
    return started
  })()
  return worker
}

/**
 * Mounts a fresh reference backend in the page's worker, with `handlers` in front of it, and
 * closes the previous one. `previewChatLoader` does this for every story; call it yourself for a
 * page that is not a story.
 */
export async function mountPreviewChat(
  options: PreviewChatStorybookOptions = {},
  handlers: RequestHandler[] = [],
): Promise<PreviewChatMock> {
  const { start, ...mockOptions } = options
  const started = await previewChatWorker(start)
  const previous = current
  current = undefined
  await previous?.close()
  // A `preview-chat-user` cookie left on this host (by an app served there) would name its user
  // instead of the mock's.
  document.cookie = 'preview-chat-user=; max-age=0; path=/'
  const mock = createPreviewChatHandlers(mockOptions)
  started.resetHandlers(...handlers, ...mock.handlers)
  current = mock
  return mock
}

/**
 * Mounts the reference backend in the page's worker, kept across reloads in `storage` (the
 * page's `sessionStorage` by default): restored from it now (a turn that was running runs on from
 * where it was), saved to it when the page goes (`pagehide`). For a page that shows a live chat
 * outside Storybook, e.g. a docs page: reload it mid-answer and the answer is still there. Mount
 * once per page, before the app renders.
 */
export async function mountPersistentPreviewChat(
  options: PreviewChatStorybookOptions & { storage?: PreviewChatStorage; key?: string } = {},
  handlers: RequestHandler[] = [],
): Promise<PersistentPreviewChatMock> {
  const { start, storage = sessionStorage, ...mockOptions } = options
  const started = await previewChatWorker(start)
  const previous = current
  current = undefined
  await previous?.close()
  document.cookie = 'preview-chat-user=; max-age=0; path=/'
  const mock = await createPersistentPreviewChat({ ...mockOptions, storage })
  started.resetHandlers(...handlers, ...mock.handlers)
  addEventListener('pagehide', () => mock.save())
  current = mock
  return mock
}

/**
 * The loader for `.storybook/preview`: every story gets a fresh backend, mounted in msw's
 * service worker (started once), with the story's `parameters.previewChat` applied; render and
 * play read it as `loaded.previewChat` (`previewChatOf(context)`).
 *
 * @example
 * // .storybook/preview.tsx
 * export default { loaders: [previewChatLoader({ user: 'alice' })] }
 */
export function previewChatLoader(options: PreviewChatStorybookOptions = {}): PreviewChatLoader {
  return async ({ parameters }) => {
    const story = (parameters.previewChat ?? {}) as PreviewChatParameters
    if (story.enabled === false) {
      await current?.close()
      current = undefined
      ;(await previewChatWorker(options.start)).resetHandlers()
      return {}
    }
    const mock = await mountPreviewChat({ ...options, ...story.options }, story.handlers)
    const setup = await story.setup?.(mock)
    return { previewChat: { mock, setup } }
  }
}

/** A story's `loaded.previewChat`, typed by what its `setup` returns. */
export function previewChatOf<Setup = undefined>(context: {
  loaded: Record<string, unknown>
}): LoadedPreviewChat<Setup> {
  const loaded = context.loaded.previewChat as LoadedPreviewChat<Setup> | undefined
  if (!loaded)
    throw new Error(
      'This story has no preview-chat backend: add previewChatLoader() to `loaders` in .storybook/preview (and leave parameters.previewChat.enabled on).',
    )
  return loaded
}
