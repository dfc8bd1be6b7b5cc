// The built entry must start with the "use client" directive (kept by tsup's banner), or a
// Next.js server component that imports it crashes at module load.
import { readFileSync } from 'node:fs'

const entry = new URL('../dist/index.js', import.meta.url)
const first = readFileSync(entry, 'utf8').split('\n', 1)[0]?.trim()
if (first !== "'use client'" && first !== '"use client"') {
  console.error(`dist/index.js starts with ${JSON.stringify(first)}, not "use client".`)
  process.exit(1)
}
console.log('dist/index.js starts with "use client"')
