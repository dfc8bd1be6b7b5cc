import { describe, expect, it, vi } from 'vitest'
import { createAlarm } from '../effects/alarm'
import { defaultTimers } from '../platform/environment'
import { useFakeTimersInEachTest } from './harness'

useFakeTimersInEachTest()

describe('the alarm: one timer for the earliest thing due [R-READ-COALESCE]', () => {
  it('keeps an earlier ring when asked for a later one, and moves to an earlier one', async () => {
    const rings: number[] = []
    const alarm = createAlarm(defaultTimers, (due) => rings.push(due))
    const setTimeout = vi.spyOn(defaultTimers, 'setTimeout')
    alarm.set(1_000, 0)
    alarm.set(2_000, 0)
    alarm.set(3_000, 0)
    expect(setTimeout).toHaveBeenCalledTimes(1)
    alarm.set(500, 0)
    await vi.advanceTimersByTimeAsync(2_000)
    expect(rings).toEqual([500])
    alarm.set(Number.POSITIVE_INFINITY, 2_000)
    alarm.clear()
    await vi.advanceTimersByTimeAsync(5_000)
    expect(rings).toEqual([500])
    setTimeout.mockRestore()
  })
})
