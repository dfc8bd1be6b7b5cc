import type { Flavor } from './types'

/**
 * The platform's unreleased protocol (`shared/interop/next-era.md`): the spec, plus the queue on
 * the server. A message posted while a turn runs is queued (`message-queued` is its acceptance)
 * instead of refused; the queue routes are served; `execution-started` carries `inputMessageIds`;
 * a queued message can be steered into the running turn (`message-steered`); every change of a
 * queue is pushed (`agentMessageQueueUpdated`); a `messageId` is deduped. There is no released
 * server of it: `fixtures/next-era/` is this flavor's own record (see its README).
 *
 * Built on the spec flavor it is given (`index.ts` makes both), so that this file depends on no
 * other flavor: what differs is only what the queue adds. The queue itself is `../queue/`.
 */
export function nextEraFlavor(spec: Flavor): Flavor {
  return {
    ...spec,
    name: 'next-era',
    serves: () => true,
    capabilities: ['message-dedupe', 'message-queue'],
  }
}
