import { bundles, type BundleSize } from '../bundle'
import { fmt, type Row, type Sizes } from '../row'

/** Issue 21's budget for the whole API, eventsource-parser in (the 12 KB goal of issue 15 is retired). */
export const SIZE_BUDGET_BYTES = 18.5 * 1024

export async function bundleRow(_sizes: Sizes): Promise<Row> {
  const [
    full,
    typical,
    fullTq,
    typicalTq,
    aiSdk,
    langGraph,
    assistantUi,
    aiSdkNoZod,
    langGraphNoCore,
  ] = await Promise.all([
    bundles.ours.full(),
    bundles.ours.typical(),
    bundles.ours.fullWithTanstack(),
    bundles.ours.typicalWithTanstack(),
    bundles.aiSdk(),
    bundles.langGraph(),
    bundles.assistantUi(),
    bundles.aiSdk(true),
    bundles.langGraph(true),
  ])
  const parts = full.byPackage
    .filter(([, bytes]) => bytes >= 100)
    .map(([name, bytes]) => `${name} ${fmt.kb(bytes)}`)
    .join(', ')
  const size = (b: BundleSize) =>
    `${fmt.kb(b.gzipped)} gz, ${fmt.kb(b.brotli)} br (${fmt.kb(b.minified)} min)`
  const x = (peer: BundleSize, mine: BundleSize) =>
    `${fmt.x(peer.gzipped / mine.gzipped)} gz, ${fmt.x(peer.brotli / mine.brotli)} br`
  return {
    id: 6,
    name: 'Bundle',
    workload:
      'a chat UI import — ours: createPreviewChatClient, PreviewChatProvider, usePreviewChat; AI SDK: useChat, DefaultChatTransport; LangGraph: useStream, FetchStreamTransport; assistant-ui: AssistantRuntimeProvider, useExternalStoreRuntime — and our whole API (export *)',
    method: `esbuild 0.28 bundle, minify, ESM, browser; gzip -9 and brotli 11; react and react-dom left out; every required dependency counted, peers included (TanStack Query for ours, zod for ai, @langchain/core for LangGraph), and each also with those peers left out (for an app that has them already); our whole API by package (min): ${parts}`,
    ours: `typical: ${size(typical)} without TanStack Query, ${size(typicalTq)} with it; whole API: ${size(full)} without, ${size(fullTq)} with`,
    peer: `AI SDK ${size(aiSdk)} with zod, ${size(aiSdkNoZod)} without; LangGraph useStream ${size(langGraph)} with @langchain/core, ${size(langGraphNoCore)} without; assistant-ui external store ${size(assistantUi)} (no peers to leave out)`,
    ratio: `peer/ours, typical, all counted: AI SDK ${x(aiSdk, typicalTq)}, LangGraph ${x(langGraph, typicalTq)}, assistant-ui ${x(assistantUi, typicalTq)}; shared peers left out: AI SDK ${x(aiSdkNoZod, typical)}, LangGraph ${x(langGraphNoCore, typical)}, assistant-ui ${x(assistantUi, typical)}`,
    goal: `≤ ${fmt.kb(SIZE_BUDGET_BYTES)} gzipped, whole API, TanStack Query left out; CI fails when any way of importing grows over its budget (pnpm check:size)`,
    met: full.gzipped <= SIZE_BUDGET_BYTES,
  }
}
