import { describe, expect, it, vi } from 'vitest'
import { defaultTimers } from '../platform/environment'
import { lingering } from '../effects/linger'
import { useFakeTimersInEachTest } from './harness'

useFakeTimersInEachTest()

describe('lingering: open with the first user, close a moment after the last [R-LIFECYCLE-QUIET]', () => {
  it('reuses what is open across a release and an acquire within the linger (a StrictMode remount)', async () => {
    const close = vi.fn()
    const open = vi.fn(() => close)
    const resource = lingering(open, defaultTimers, 100)
    const releaseA = resource.acquire()
    const releaseB = resource.acquire()
    releaseA()
    releaseB()
    releaseB() // a second release of the same share changes nothing
    await vi.advanceTimersByTimeAsync(50)
    const releaseC = resource.acquire()
    await vi.advanceTimersByTimeAsync(500)
    expect(open).toHaveBeenCalledTimes(1)
    expect(close).not.toHaveBeenCalled()
    releaseC()
    await vi.advanceTimersByTimeAsync(100)
    expect(close).toHaveBeenCalledTimes(1)
    expect(resource.isOpen).toBe(false)
  })

  it('closes at once on close(), whoever holds it', () => {
    const close = vi.fn()
    const resource = lingering(() => close, defaultTimers, 100)
    resource.acquire()
    resource.close()
    expect(close).toHaveBeenCalledTimes(1)
    expect(resource.isOpen).toBe(false)
  })
})
