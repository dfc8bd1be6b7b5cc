/**
 * `pnpm check:size`: fails when the gzipped bundle of @preview-chat/core + @preview-chat/react
 * grows more than 10% over the recorded baseline (size-baseline.json), or when a production
 * bundle of `@preview-chat/react/devtools` holds the panel. `--update` records the current sizes
 * as the new baseline (do that in the commit that accepts a growth, and say why).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { bundles, devtoolsBundles, devtoolsMarker } from './bundle'

const baselinePath = fileURLToPath(new URL('../size-baseline.json', import.meta.url))
const TOLERANCE = 1.1

// One figure per way of importing: the whole API, the README's usage, and each extra on its own.
// (A "minimal" profile — provider, hook, SSE push, no relay — is the typical one for now: the
// client still picks its push adapters and the relay itself.)
const full = (await bundles.ours.full()).gzipped
const current = {
  full,
  typical: (await bundles.ours.typical()).gzipped,
  /** What each extra adds to the whole API. */
  persist: (await bundles.ours.withPersist()).gzipped - full,
  devtools: (await bundles.ours.withDevtools()).gzipped - full,
}

// The devtools panel is for development builds only: a production bundle of its import keeps an
// empty component, and the marker of the panel's markup shows that the check can see it.
const devtools = {
  production: await devtoolsBundles.production(),
  development: await devtoolsBundles.development(),
}
const devtoolsOk =
  !devtools.production.code.includes(devtoolsMarker) &&
  devtools.development.code.includes(devtoolsMarker)
console.log(
  `${devtoolsOk ? 'ok  ' : 'FAIL'} devtools: production bundle ${devtools.production.minified} B minified, panel ${devtools.production.code.includes(devtoolsMarker) ? 'PRESENT' : 'absent'}; development bundle ${devtools.development.minified} B, panel ${devtools.development.code.includes(devtoolsMarker) ? 'present' : 'MISSING'}`,
)
if (!devtoolsOk) {
  console.error(
    "A production bundle of '@preview-chat/react/devtools' must not contain the panel: keep the NODE_ENV switch in packages/react/src/devtools/index.ts and the package free of side effects.",
  )
  process.exitCode = 1
}

if (process.argv.includes('--update')) {
  writeFileSync(baselinePath, `${JSON.stringify({ gzippedBytes: current }, null, 2)}\n`)
  console.log(`size-baseline.json updated: ${JSON.stringify(current)}`)
} else {
  const baseline = (
    JSON.parse(readFileSync(baselinePath, 'utf8')) as { gzippedBytes: typeof current }
  ).gzippedBytes
  let failed = false
  for (const name of Object.keys(current) as (keyof typeof current)[]) {
    if (baseline[name] === undefined) {
      console.log(
        `FAIL ${name}: ${current[name]} B gzipped, no baseline (record one with --update)`,
      )
      failed = true
      continue
    }
    const limit = Math.floor(baseline[name] * TOLERANCE)
    const ok = current[name] <= limit
    failed ||= !ok
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${name}: ${current[name]} B gzipped (baseline ${baseline[name]} B, limit +10% = ${limit} B)`,
    )
  }
  if (failed) {
    console.error(
      'The bundle grew more than 10% over bench/size-baseline.json. Shrink it, or accept it with `pnpm --filter @preview-chat/bench check:size --update` and say why in the commit.',
    )
    process.exit(1)
  }
}
