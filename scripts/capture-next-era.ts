/**
 * `pnpm fixtures:next-era`: writes `fixtures/next-era/` from the reference server's next-era
 * flavor (there is no released server of the platform's queue protocol to capture from; see that
 * folder's README). Deterministic: running it again changes nothing unless the flavor changed.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { captureNextEra } from '../packages/server/src/__tests__/next-era-capture'

const directory = new URL('../fixtures/next-era/', import.meta.url)
mkdirSync(directory, { recursive: true })
const files = await captureNextEra()
for (const [name, text] of Object.entries(files)) writeFileSync(new URL(name, directory), text)
console.log(`wrote ${Object.keys(files).length} files to fixtures/next-era/`)
