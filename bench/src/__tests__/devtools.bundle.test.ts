import { describe, expect, it } from 'vitest'
import { devtoolsBundles, devtoolsMarker } from '../bundle'

// What `pnpm check:size` checks, as a test: an app's production build gets no devtools panel.
describe('@preview-chat/react/devtools in an app bundle', () => {
  it('is an empty component in a production build', async () => {
    const { code, minified } = await devtoolsBundles.production()
    expect(code).not.toContain(devtoolsMarker)
    expect(code).not.toContain('preview-chat devtools')
    expect(minified).toBeLessThan(200)
  })

  it('is the panel in a development build, and from /devtools/production in any build', async () => {
    expect((await devtoolsBundles.development()).code).toContain(devtoolsMarker)
    expect((await devtoolsBundles.optIn()).code).toContain(devtoolsMarker)
  })
})
