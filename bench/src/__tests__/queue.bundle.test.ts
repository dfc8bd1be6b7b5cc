import { describe, expect, it } from 'vitest'
import { bundles, goneQueueSeams, queueMarkers } from '../bundle'

// What `pnpm check:size` checks, as a test (issue 36): the queue brings its own seams, so a client
// that does not import it carries none of its code, and the base's old seams for it are gone.
describe("the queue's seams in the bundles [R-QUEUE-SEAMS]", () => {
  it('no profile without the queue holds its code; the bundle with it does', async () => {
    const profiles = await Promise.all([
      bundles.ours.minimal(),
      bundles.ours.typical(),
      bundles.ours.full(),
    ])
    const withQueue = await bundles.ours.withQueue()
    for (const marker of queueMarkers) {
      for (const profile of profiles) expect(profile.code).not.toContain(marker)
      expect(withQueue.code).toContain(marker)
    }
    for (const name of goneQueueSeams)
      for (const bundle of [...profiles, withQueue]) expect(bundle.code).not.toContain(name)
  })
})
