/**
 * `pnpm check:size`: fails when the gzipped bundle of any way of importing @preview-chat/core +
 * @preview-chat/react grows over its recorded budget (size-baseline.json; the figures are exact, so
 * a byte over fails), when
 * the minimal profile holds an adapter it did not import, when a profile without the queue holds
 * its code (or any bundle the names of the seams the base once carried for it), or when a
 * production bundle of `@preview-chat/react/devtools` holds the panel. `--update` records the current sizes as the new
 * baseline (do that in the commit that accepts a growth, and say why).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import {
  adapterMarkers,
  bundles,
  devtoolsBundles,
  devtoolsMarker,
  goneQueueSeams,
  partBundles,
  partMarkers,
  queueMarkers,
  serverBundle,
} from './bundle'

const baselinePath = fileURLToPath(new URL('../size-baseline.json', import.meta.url))

// One figure per way of importing: the whole API, the README's usage, the minimal one (provider,
// hook, SSE push, no relay, no throttle), and each extra on its own.
const fullBundle = await bundles.ours.full()
const full = fullBundle.gzipped
const withQueue = await bundles.ours.withQueue()
const typical = await bundles.ours.typical()
const minimal = await bundles.ours.minimal()
const parts = {
  relay: await partBundles.relay(),
  websocketPush: await partBundles.websocketPush(),
  throttle: await partBundles.throttle(),
  released: await partBundles.released(),
}
const current = {
  full,
  typical: typical.gzipped,
  minimal: minimal.gzipped,
  /** What each part adds to the minimal profile (issue 36: every part's cost a row of its own). */
  relay: parts.relay.gzipped - minimal.gzipped,
  websocketPush: parts.websocketPush.gzipped - minimal.gzipped,
  throttle: parts.throttle.gzipped - minimal.gzipped,
  released: parts.released.gzipped - minimal.gzipped,
  /** What each extra adds to the whole API. */
  persist: (await bundles.ours.withPersist()).gzipped - full,
  queue: withQueue.gzipped - full,
  devtools: (await bundles.ours.withDevtools()).gzipped - full,
  assistantUi: (await bundles.ours.withAssistantUi()).gzipped - full,
  /**
   * The browser-safe server entry as the msw kit mounts it (`createPreviewChatBackend`, the memory
   * store and bus, the scripted agent): what a service worker or a test's bundle carries. Issue 44
   * (async store and bus interfaces, `authenticate`, limits, shutdown, logs): 17,451 → 21,071 B.
   */
  serverBackend: (await serverBundle()).gzipped,
}

// Pay for what you use: what the minimal profile did not import is not in its bundle.
for (const marker of adapterMarkers) {
  const inMinimal = minimal.code.includes(marker)
  const inTypical = typical.code.includes(marker)
  const ok = !inMinimal && inTypical
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} ${marker}: ${inMinimal ? 'PRESENT' : 'absent'} in the minimal profile, ${inTypical ? 'present' : 'MISSING'} in the typical one`,
  )
  if (!ok) {
    console.error(
      `The minimal profile (createMinimalPreviewChatClient + ssePush) must not bundle '${marker}': keep the default adapters in packages/core/src/defaults.ts, out of client.ts and the session.`,
    )
    process.exitCode = 1
  }
}

// A part's code is in a bundle only when the app imports the part: the relay's engine part (what
// reads the other tabs) is absent from the minimal profile, present with `broadcastChannelRelay`;
// the released platform's, present with `releasedPlatform`.
for (const [part, markers] of Object.entries(partMarkers)) {
  for (const marker of markers) {
    const inMinimal = minimal.code.includes(marker)
    const inPart = parts[part as keyof typeof partMarkers].code.includes(marker)
    const ok = !inMinimal && inPart
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${part} part ('${marker}'): ${inMinimal ? 'PRESENT' : 'absent'} in the minimal profile, ${inPart ? 'present' : 'MISSING'} with the part`,
    )
    if (!ok) {
      console.error(
        `The minimal profile must not bundle the ${part} part: the engine takes it only through the part's import (engine/slices/${part}.ts's \`${part}Part\`, brought by its adapter), never through client.ts, reduce.ts or the session.`,
      )
      process.exitCode = 1
    }
  }
}

// The queue's seams are the queue's (issue 36): no profile without it holds its code, the bundle
// with it does; and the seams the base carried for it before are in no bundle by their old names.
const profiles = { minimal, typical, full: fullBundle }
for (const marker of queueMarkers) {
  const holding = Object.entries(profiles).filter(([, bundle]) => bundle.code.includes(marker))
  const inQueue = withQueue.code.includes(marker)
  const ok = holding.length === 0 && inQueue
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} queue part ('${marker}'): ${holding.length ? `PRESENT in ${holding.map(([name]) => name).join(', ')}` : 'absent from the profiles'}, ${inQueue ? 'present' : 'MISSING'} with the queue`,
  )
  if (!ok) {
    console.error(
      `No profile without the queue may bundle its code: the queue brings its own seams (engine/queue/, effects/queueHost.ts), never through the transport, the push channel or the engine's actions.`,
    )
    process.exitCode = 1
  }
}
for (const name of goneQueueSeams) {
  const holding = Object.entries({ ...profiles, queue: withQueue })
    .filter(([, bundle]) => bundle.code.includes(name))
    .map(([profile]) => profile)
  console.log(
    `${holding.length ? 'FAIL' : 'ok  '} queue seam '${name}': ${holding.length ? `PRESENT in ${holding.join(', ')}` : 'in no bundle'}`,
  )
  if (holding.length) process.exitCode = 1
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

/**
 * An extra's figure is what it adds to the whole API, and gzip's window makes that move by a few
 * dozen bytes when the code beside it changes (a smaller core can make the devtools cost 20 B
 * more): extras get this slack; the profiles themselves none, since their figures are exact.
 */
const EXTRA_SLACK_BYTES = 64
const extras = new Set<keyof typeof current>([
  'relay',
  'websocketPush',
  'throttle',
  'released',
  'persist',
  'queue',
  'devtools',
  'assistantUi',
])

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
    const limit = baseline[name] + (extras.has(name) ? EXTRA_SLACK_BYTES : 0)
    const ok = current[name] <= limit
    failed ||= !ok
    const against = current[name] - baseline[name]
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${name}: ${current[name]} B gzipped (budget ${baseline[name]} B${extras.has(name) ? ` + ${EXTRA_SLACK_BYTES} B` : ''}, ${against <= 0 ? `${-against} B under` : `${against} B over`})`,
    )
  }
  if (failed) {
    console.error(
      'A bundle grew over its budget in bench/size-baseline.json. Shrink it, or accept it with `pnpm --filter @preview-chat/bench check:size --update` and say why in the commit.',
    )
    process.exit(1)
  }
}
