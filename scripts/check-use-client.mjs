// `node scripts/check-use-client.mjs <file>…` (from a package's directory): each built entry must
// start with the "use client" directive (kept by tsup's banner), or a Next.js server component
// that imports it crashes at module load.
import { readFileSync } from 'node:fs'

const files = process.argv.slice(2)
if (files.length === 0) files.push('dist/index.js')
let failed = false
for (const file of files) {
  const first = readFileSync(file, 'utf8').split('\n', 1)[0]?.trim()
  if (first === "'use client'" || first === '"use client"')
    console.log(`${file} starts with "use client"`)
  else {
    console.error(`${file} starts with ${JSON.stringify(first)}, not "use client".`)
    failed = true
  }
}
if (failed) process.exit(1)
