import { pipelineRow } from './rows/pipeline'
import type { Row, Sizes } from './row'

const sizes: Sizes = { smoke: process.argv.includes('--smoke') }

async function main() {
  const rows: Row[] = []
  const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice(7).split(',').map(Number)
  const all: [number, (sizes: Sizes) => Promise<Row>][] = [[1, pipelineRow]]
  for (const [id, run] of all) {
    if (only && !only.includes(id)) continue
    const started = performance.now()
    const row = await run(sizes)
    process.stderr.write(`row ${id} done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
    rows.push(row)
  }
  console.log(JSON.stringify(rows, null, 2))
}

await main()
