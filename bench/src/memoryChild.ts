/** Row 5's measurement of one side, in a process of its own: prints its peaks as JSON. */
import { oursRun, vercelRun } from './rows/memory'

const [which, deltas] = process.argv.slice(2)
const run = which === 'ours' ? oursRun : vercelRun
await run(Math.min(Number(deltas), 10_000)) // warm-up
console.log(JSON.stringify(await run(Number(deltas))))
process.exit(0)
