/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run, as in tests */
import { build } from 'esbuild'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'

const here = fileURLToPath(new URL('.', import.meta.url))

export interface BundleSize {
  minified: number
  gzipped: number
  /** Brotli at quality 11, as a CDN serves it. */
  brotli: number
  /** Minified bytes by package, largest first. */
  byPackage: [string, number][]
  /** The minified bundle itself. */
  code: string
}

/** Minifies `entry` (ESM source) for the browser with esbuild, `external` left out, and compresses it (gzip -9, brotli 11). */
export async function measureBundle(
  entry: string,
  external: string[],
  /** Packages read from other sources (the bundle before a change). */
  alias?: Record<string, string>,
  /** `process.env.NODE_ENV` as the app's bundler defines it. */
  nodeEnv: 'production' | 'development' = 'production',
): Promise<BundleSize> {
  const result = await build({
    stdin: { contents: entry, resolveDir: here, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    external,
    ...(alias && {
      alias,
      // Sources outside the workspace find their dependencies in it.
      nodePaths: [
        '../node_modules',
        '../../packages/core/node_modules',
        '../../packages/react/node_modules',
      ].map((path) => fileURLToPath(new URL(path, import.meta.url))),
    }),
    // Our packages from their sources (no build needed); what ships in dist/ is the same code.
    conditions: ['@preview-chat/source'],
    define: { 'process.env.NODE_ENV': JSON.stringify(nodeEnv) },
    logLevel: 'error',
  })
  const code = result.outputFiles[0]!.contents
  const byPackage = new Map<string, number>()
  for (const output of Object.values(result.metafile.outputs))
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules)/.exec(path)
      const name =
        match?.[1] ??
        (/packages\/([^/]+)\//.exec(path)?.[1]
          ? `@preview-chat/${/packages\/([^/]+)\//.exec(path)![1]}`
          : path)
      byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput)
    }
  return {
    minified: code.byteLength,
    gzipped: gzipSync(code, { level: 9 }).byteLength,
    brotli: brotliCompressSync(code, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_SIZE_HINT]: code.byteLength,
      },
    }).byteLength,
    byPackage: [...byPackage].sort((a, b) => b[1] - a[1]),
    code: new TextDecoder().decode(code),
  }
}

export const reactPeers = ['react', 'react-dom', 'react/jsx-runtime', 'react/jsx-dev-runtime']
/** Our packages' peer dependencies: an app that uses TanStack Query has them already. */
export const tanstack = ['@tanstack/react-query', '@tanstack/query-core']

/** Our whole API: every export of core and react. */
export const ourWhole = `export * from '@preview-chat/core'\nexport * from '@preview-chat/react'`

/**
 * Core's and react's sources at `rev` (git archive into a temporary directory), and the aliases
 * that make a bundle of them; `null` where git cannot give them. `remove()` deletes the copy.
 */
export function sourcesAt(
  rev: string,
): { dir: string; alias: Record<string, string>; remove(): void } | null {
  try {
    const dir = mkdtempSync(join(tmpdir(), `preview-chat-${rev}-`))
    const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim()
    const archive = execFileSync('git', [
      '-C',
      root,
      'archive',
      rev,
      'packages/core/src',
      'packages/react/src',
    ])
    execFileSync('tar', ['-x', '-C', dir], { input: archive })
    return {
      dir,
      alias: {
        '@preview-chat/core': join(dir, 'packages/core/src/index.ts'),
        '@preview-chat/react': join(dir, 'packages/react/src/index.ts'),
      },
      remove: () => rmSync(dir, { recursive: true, force: true }),
    }
  } catch {
    return null
  }
}
const ourTypical = `export { createPreviewChatClient } from '@preview-chat/core'\nexport { PreviewChatProvider, usePreviewChat } from '@preview-chat/react'`
/** The provider, the hook and one thread, with SSE push and nothing else (no relay, no throttle). */
const ourMinimal = `export { createMinimalPreviewChatClient, ssePush } from '@preview-chat/core'\nexport { PreviewChatProvider, usePreviewChat } from '@preview-chat/react'`

/**
 * The minimal profile with one more import: what a part of the client costs an app that adds it
 * (`pnpm check:size` gives each its row: the difference from the minimal profile).
 */
const minimalWith = (extra: string) =>
  measureBundle(`${ourMinimal}\n${extra}`, [...reactPeers, ...tanstack])

/** The parts an app adds to the minimal client by what it imports, each with its import. */
export const partBundles = {
  /** The tab relay: `broadcastChannelRelay()`, and the engine's part that reads the other tabs. */
  relay: () => minimalWith(`export { broadcastChannelRelay } from '@preview-chat/core'`),
  /** The WebSocket push channel instead of (beside) the SSE one. */
  websocketPush: () => minimalWith(`export { websocketPush } from '@preview-chat/core'`),
  /** The frame throttle of the view. */
  throttle: () => minimalWith(`export { throttleState } from '@preview-chat/core'`),
  /**
   * The released n8n 2.41's part (`releasedPlatform()`): stand-in ids, derived snapshots and their
   * silent turns, Stop by closing the stream (in `createPreviewChatClient` by default).
   */
  released: () => minimalWith(`export { releasedPlatform } from '@preview-chat/core'`),
}

/**
 * Strings that only a part's code holds: none may be in the minimal profile's bundle, and each
 * must be in the bundle of its part (so that the check can see it). The relay's are the warning of
 * its protocol's parser (`engine/slices/relay.ts`), the engine's part that reads the other tabs,
 * and the issue of its protocol's schema (`engine/relay.ts`'s `turnEvent`, which only the relay's
 * messages and a live turn kept in storage use; issue 46: the schema, ~300 B gzipped, was in the
 * minimal bundle, unseen by the parser's marker); the released platform's, the error of its Stop
 * by closing (`engine/slices/released.ts`); and the relay's command (`type:"relay"`, as the minified
 * code spells the object that `relaying` makes of what a step reported: issue 46, the base no
 * longer makes it, so that a client without a relay tells no tab anything).
 */
export const partMarkers = {
  relay: ['tab relay channel', 'not a turn event of this client', 'type:"relay"'],
  released: ['stops a turn only from the tab that sent it'],
} as const

/**
 * Strings only the queue's code holds (issue 36: its seams are its own): the capability token its
 * reducer reads from the tokens the actions carry (`"message-queue"` as the bundle quotes it, so
 * that the `message-queued` event every client reads is no match) and the type of its push
 * message, read by its host from the channel's messages. None may be in a profile without the
 * queue; each must be in the bundle with it.
 */
export const queueMarkers = ['"message-queue"', 'agentMessageQueueUpdated'] as const

/**
 * The names of the seams the base client carried for the queue before issue 36 (the transport's
 * `callThread`, the push listener's `onOther`, the actions' `queuesMessages`): in no bundle now,
 * the queue's included, so that none comes back into the base by its old name.
 */
export const goneQueueSeams = ['callThread', 'onOther', 'queuesMessages'] as const

/**
 * The bundles row 6 and `pnpm check:size` measure. Only React is left out of every bundle; each
 * library's required dependencies (peers included) are counted, but for ours, which is also
 * measured with TanStack Query left out, for an app that has it already.
 */
export const bundles = {
  ours: {
    /** The whole API, TanStack Query left out: the size goal and `check:size`. */
    full: () => measureBundle(ourWhole, [...reactPeers, ...tanstack]),
    typical: () => measureBundle(ourTypical, [...reactPeers, ...tanstack]),
    minimal: () => measureBundle(ourMinimal, [...reactPeers, ...tanstack]),
    /**
     * The whole API with an extra import (its cost is the difference from `full`): the
     * transcripts kept across a reload, and the devtools panel as a production build shows it.
     */
    withPersist: () =>
      measureBundle(
        `${ourWhole}\nexport { persistTranscripts } from '@preview-chat/react/persist'`,
        [...reactPeers, ...tanstack],
      ),
    /** The message queue (`queue()`, issue 29): its reducer around the engine's and its host. */
    withQueue: () =>
      measureBundle(`${ourWhole}\nexport { queue } from '@preview-chat/react/queue'`, [
        ...reactPeers,
        ...tanstack,
      ]),
    withDevtools: () =>
      measureBundle(
        `${ourWhole}\nexport { PreviewChatDevtools } from '@preview-chat/react/devtools/production'`,
        [...reactPeers, ...tanstack],
      ),
    /** The assistant-ui runtime on top of the whole API, assistant-ui itself left out (a peer). */
    withAssistantUi: () =>
      measureBundle(
        `${ourWhole}\nexport { usePreviewChatRuntime } from '@preview-chat/assistant-ui'`,
        [...reactPeers, ...tanstack, '@assistant-ui/react'],
      ),
    /** For an app without TanStack Query: query-core and react-query counted. */
    fullWithTanstack: () => measureBundle(ourWhole, reactPeers),
    typicalWithTanstack: () => measureBundle(ourTypical, reactPeers),
  },
  /** A chat UI's import of the AI SDK (client code only); `zod`, a required peer of `ai`, counted. */
  aiSdk: (leaveOutPeers = false) =>
    measureBundle(
      `export { useChat } from '@ai-sdk/react'\nexport { DefaultChatTransport } from 'ai'`,
      leaveOutPeers ? [...reactPeers, 'zod', 'zod/*'] : reactPeers,
    ),
  /** LangGraph's `useStream` with its custom transport; `@langchain/core`, a required peer, counted. */
  langGraph: (leaveOutPeers = false) =>
    measureBundle(
      `export { useStream, FetchStreamTransport } from '@langchain/langgraph-sdk/react'`,
      leaveOutPeers ? [...reactPeers, '@langchain/core', '@langchain/core/*'] : reactPeers,
    ),
  /** assistant-ui's external-store runtime (no components), with its dependencies. */
  assistantUi: () =>
    measureBundle(
      `export { AssistantRuntimeProvider, useExternalStoreRuntime } from '@assistant-ui/react'`,
      reactPeers,
    ),
}

/**
 * What only the adapters hold (a WebSocket, the BroadcastChannel relay, the frame throttle): none
 * may be in the minimal profile's bundle, and each must be in the typical one (so that the check
 * can see them).
 */
export const adapterMarkers = ['WebSocket', 'BroadcastChannel', 'requestAnimationFrame'] as const

/** A string of the devtools panel's markup (`packages/react/src/devtools/PreviewChatDevtools.tsx`). */
export const devtoolsMarker = 'data-preview-chat-devtools'
const devtoolsEntry = `export { PreviewChatDevtools } from '@preview-chat/react/devtools'`

/**
 * An app's `import { PreviewChatDevtools } from '@preview-chat/react/devtools'`, bundled as its
 * production and development builds bundle it, and the opt-in `/devtools/production` entry: the
 * panel (its marker) must be in the last two and absent from the first.
 */
export const devtoolsBundles = {
  production: () => measureBundle(devtoolsEntry, [...reactPeers, ...tanstack]),
  development: () =>
    measureBundle(devtoolsEntry, [...reactPeers, ...tanstack], undefined, 'development'),
  optIn: () =>
    measureBundle(`export { PreviewChatDevtools } from '@preview-chat/react/devtools/production'`, [
      ...reactPeers,
      ...tanstack,
    ]),
}

/**
 * The server's browser-safe entry as `@preview-chat/msw` mounts it: `createPreviewChatBackend` with
 * its embedded defaults (the memory store and bus, the scripted agent), `@preview-chat/core`
 * bundled in (nothing external: a worker's bundle carries it all).
 */
export const serverBundle = () =>
  measureBundle(`export { createPreviewChatBackend } from '@preview-chat/server'`, [])
