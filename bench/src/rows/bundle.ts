import { bundles } from '../bundle'
import { fmt, type Row, type Sizes } from '../row'

export async function bundleRow(_sizes: Sizes): Promise<Row> {
  const [oursFull, oursTypical, vercelFull, vercelTypical, withQueryCore] = await Promise.all([
    bundles.ours.full(),
    bundles.ours.typical(),
    bundles.vercel.full(),
    bundles.vercel.typical(),
    bundles.ours.withQueryCore(),
  ])
  const parts = oursFull.byPackage.map(([name, bytes]) => `${name} ${fmt.kb(bytes)}`).join(', ')
  const size = (b: { minified: number; gzipped: number }) =>
    `${fmt.kb(b.gzipped)} gz (${fmt.kb(b.minified)} min)`
  return {
    id: 6,
    name: 'Bundle',
    workload: `whole API (export *) and a typical chat UI import (ours: createPreviewChatClient, PreviewChatProvider, usePreviewChat; AI SDK: useChat, DefaultChatTransport)`,
    method: `esbuild 0.28 bundle, minify, ESM, browser, gzip -9; external: the peers — react, react-dom, @tanstack/react-query and @tanstack/query-core (ours; an app using react-query has query-core already) / zod (ai's); bundled and counted: our dependencies zustand, valibot, eventsource-parser — minified bytes of ours by package: ${parts}`,
    ours: `whole ${size(oursFull)}; typical ${size(oursTypical)}; whole with query-core bundled too ${size(withQueryCore)}`,
    peer: `@ai-sdk/react + ai: whole ${size(vercelFull)}; typical ${size(vercelTypical)}`,
    ratio: `AI SDK/ours gzipped: whole ${fmt.x(vercelFull.gzipped / oursFull.gzipped)}, typical ${fmt.x(vercelTypical.gzipped / oursTypical.gzipped)}`,
    goal: '< 12 KB gzipped (whole API); CI fails on > 10% growth (pnpm check:size)',
    met: oursFull.gzipped < 12 * 1024,
  }
}
