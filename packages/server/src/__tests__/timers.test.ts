/**
 * The server's clock is injected like the agent's sleep: the snapshot batches, the SSE pings and
 * the default sleep run on `timers`, so a test can drive a whole turn on fake time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createPreviewChatBackend } from '../backend'

afterEach(() => {
  vi.useRealTimers()
})

/** Timers that count their calls, on top of the (fake) platform timers. */
function countedTimers() {
  const calls = { set: 0 }
  return {
    calls,
    timers: {
      setTimeout: (callback: () => void, ms: number) => {
        calls.set++
        return setTimeout(callback, ms)
      },
      clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
      now: () => performance.now(),
    },
  }
}

describe('injected timers [R-SERVER-TIMERS R-SERVER-SNAPSHOTS]', () => {
  it('run the snapshot batches, the pings and the agent’s pauses of a turn', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    const { calls, timers } = countedTimers()
    const backend = createPreviewChatBackend({
      dev: true,
      timers,
      deltaMs: 100,
      snapshotMs: 250,
      pingMs: 1_000,
    })
    const response = await backend.fetch(
      new Request('http://x/rest/projects/p/agents/v2/a/chat', {
        method: 'POST',
        headers: { authorization: 'Bearer alice', 'content-type': 'application/json' },
        body: JSON.stringify({ message: '/long 5', sessionId: 't1', newSession: true }),
      }),
    )
    expect(response.status).toBe(200)
    // Nothing moves until the test moves the clock.
    const before = backend.inspect.recordings.length
    await vi.advanceTimersByTimeAsync(99)
    expect(backend.inspect.running()).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(5_000)
    expect(backend.inspect.running()).toHaveLength(0)
    expect(backend.inspect.recordings.length).toBeGreaterThan(before + 1)
    expect(backend.inspect.history('t1')?.messages.at(-1)?.executionStatus).toBe('success')
    expect(calls.set).toBeGreaterThan(5)
    await response.body?.cancel()
    await backend.close()
  })
})
