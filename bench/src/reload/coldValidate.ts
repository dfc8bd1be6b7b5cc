/* eslint-disable @typescript-eslint/no-non-null-assertion -- a missing value here is a failed run */
/**
 * `pnpm --filter @preview-chat/bench bench:validate:cold [messages] [samples]` (issue 46): the CPU
 * time of one history read's validation (`parseHistorySnapshot`) as a first visit runs it — code
 * never run before — beside the body's `JSON.parse`. The contract is bundled and minified as an
 * app's production build holds it, and each sample runs it in a fresh `vm` context from a source
 * made unique (so that V8 reuses no compiled code: what a reload gets and a first visit does not).
 * The thread is the page-load row's (`recordedMessages`, 2,000 by default); 25 samples; min and
 * median. Run it at two commits to compare them.
 */
import { build } from 'esbuild'
import { runInNewContext } from 'node:vm'
import { fileURLToPath } from 'node:url'
import { recordedMessages } from './seed'

const count = Number(process.argv[2] ?? 2000)
const samples = Number(process.argv[3] ?? 25)
const text = JSON.stringify({
  data: {
    messages: recordedMessages(count, 'endmarker'),
    openSuspensions: [],
    activeExecutionId: null,
  },
})
const built = await build({
  stdin: {
    contents: `export { parseHistorySnapshot } from './packages/core/src/wire/contract/snapshot'`,
    resolveDir: fileURLToPath(new URL('../../../', import.meta.url)),
    loader: 'ts',
  },
  bundle: true,
  write: false,
  format: 'iife',
  globalName: 'contract',
  platform: 'neutral',
  minify: true,
  define: { 'process.env.NODE_ENV': '"production"' },
})
const source = built.outputFiles[0]!.text
const cpu = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const parse: number[] = []
const validate: number[] = []
for (let i = 0; i < samples; i++) {
  // The body parsed inside the context: its objects have that context's `Object.prototype`.
  const context: Record<string, unknown> = { text }
  runInNewContext(`${source}\n// sample ${i} ${Math.random()}`, context)
  const t0 = cpu()
  runInNewContext('body = JSON.parse(text)', context)
  const t1 = cpu()
  runInNewContext('result = contract.parseHistorySnapshot(body)', context)
  const t2 = cpu()
  if (!(context.result as { success: boolean }).success) throw new Error('the read was refused')
  parse.push(t1 - t0)
  validate.push(t2 - t1)
}
const stat = (values: number[]) => {
  const sorted = values.toSorted((a, b) => a - b)
  return `min ${sorted[0]!.toFixed(2)} / median ${sorted[sorted.length >> 1]!.toFixed(2)} ms`
}
console.log(
  `${count.toLocaleString('en-US')} messages, ${samples} cold samples (CPU time): JSON.parse ${stat(parse)}; validation ${stat(validate)}`,
)
