import { describe, expect, it } from 'vitest'
import { PreviewChatError } from '../wire/contract/errors'

describe('PreviewChatError [R-WIRE-ERROR-CLASS]', () => {
  it('carries its code and options', () => {
    const cause = new Error('socket hang up')
    const error = new PreviewChatError('network_error', 'offline', { cause, status: undefined })
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({
      name: 'PreviewChatError',
      code: 'network_error',
      message: 'offline',
      cause,
    })
    expect(error.issues).toEqual([])
  })

  it('is recognised across copies of the package by isInstance', () => {
    // A second copy of the class (as when two versions are bundled) shares only the brand.
    const brand = Symbol.for('@preview-chat/core/PreviewChatError')
    const foreign = Object.assign(new Error('x'), { code: 'not_found', [brand]: true })
    expect(foreign instanceof PreviewChatError).toBe(false)
    expect(PreviewChatError.isInstance(foreign)).toBe(true)
    expect(PreviewChatError.isInstance(new Error('x'))).toBe(false)
    expect(PreviewChatError.isInstance(null)).toBe(false)
    expect(PreviewChatError.isInstance('not_found')).toBe(false)
  })
})
