/**
 * A message's `messageId` is a UUID wherever the page runs: `crypto.randomUUID` exists only in a
 * secure context, so a page served over plain HTTP builds one from `getRandomValues` (and a host
 * with no `crypto` at all from `Math.random`). The server refuses any other shape (next-era.md).
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { randomUuid } from '../platform/environment'
import { uuidPattern } from '../wire/contract/requests'

afterEach(() => vi.unstubAllGlobals())

const version4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('randomUuid [R-POST-RETRY-DEDUPE]', () => {
  it.each([
    ['crypto.randomUUID', () => {}],
    [
      'getRandomValues only (not a secure context)',
      () => vi.stubGlobal('crypto', { getRandomValues: (b: Uint8Array) => b.fill(0xff) }),
    ],
    ['no crypto at all', () => vi.stubGlobal('crypto', undefined)],
  ])('is a version 4 UUID with %s', (_name, stub) => {
    stub()
    const ids = Array.from({ length: 50 }, randomUuid)
    for (const id of ids) {
      expect(id).toMatch(uuidPattern)
      expect(id).toMatch(version4)
    }
  })
})
