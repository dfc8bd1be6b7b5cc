import { describe, expect, it } from 'vitest'
import { explanations } from '../../../packages/core/src/wire/contract/explanations'
import { measureBundle, ourWhole, reactPeers, tanstack } from '../bundle'

/** Each explanation's text up to its first argument (what a bundle would hold of it, as written). */
const prose = Object.entries(explanations).map(([id, explanation]) => {
  const text = (explanation as (...args: unknown[]) => string)('\u0000')
  return [id, text.split('\u0000')[0]!.slice(0, 40)] as const
})
const page = 'https://github.com/preview-chat/preview-chat/blob/main/site/docs/errors.md'

// Issue 46: an app's production build carries each message's code, short sentence and link, not
// the long explanation, which its development build keeps.
describe('the messages of core and react in an app bundle', () => {
  it('[R-ERRORS-PROD-CODES] a production build holds no explanation, and the link and the ids', async () => {
    const { code } = await measureBundle(ourWhole, [...reactPeers, ...tanstack])
    const present = prose.filter(([, text]) => code.includes(text))
    expect(present).toEqual([])
    expect(code).toContain(page)
    for (const id of ['no-answer', 'not-the-contract', 'empty-message', 'no-provider'])
      expect(code).toContain(`"${id}"`)
  })

  it('[R-ERRORS-PROD-CODES] a development build holds every explanation', async () => {
    const { code } = await measureBundle(
      ourWhole,
      [...reactPeers, ...tanstack],
      undefined,
      'development',
    )
    const missing = prose.filter(([, text]) => !code.includes(text))
    expect(missing).toEqual([])
  })
})
