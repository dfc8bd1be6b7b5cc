import { describe, expect, it, vi } from 'vitest'
import { createTransport } from '../transport'
import { key } from './harness'

function hangingFetch() {
  const signals: AbortSignal[] = []
  const fetch = vi.fn((_input: RequestInfo | URL, init?: RequestInit) => {
    if (init?.signal) signals.push(init.signal)
    return new Promise<Response>((_, reject) =>
      init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
    )
  })
  return { fetch, signals }
}

describe('transport', () => {
  it('passes the caller’s cancellation on to the request (TanStack Query cancelling a read)', async () => {
    const { fetch, signals } = hangingFetch()
    const timers = { setTimeout: vi.fn(() => 1), clearTimeout: vi.fn(), now: () => 0 }
    const transport = createTransport({ baseUrl: '/rest', fetch, requestTimeoutMs: 1_000, timers })
    const caller = new AbortController()
    const read = transport.readHistory(key, caller.signal)
    await Promise.resolve()
    caller.abort(new Error('cancelled by the caller'))
    await expect(read).rejects.toThrow()
    expect(signals[0]?.aborted).toBe(true)
    // The timeout went through the injected timers, and was cleared.
    expect(timers.setTimeout).toHaveBeenCalledWith(expect.any(Function), 1_000)
    expect(timers.clearTimeout).toHaveBeenCalledWith(1)
  })

  it('times out through the injected timers with a typed error', async () => {
    const { fetch } = hangingFetch()
    let fire = () => {}
    const timers = {
      setTimeout: (callback: () => void) => ((fire = callback), 2),
      clearTimeout: () => {},
      now: () => 0,
    }
    const transport = createTransport({ baseUrl: '/rest', fetch, requestTimeoutMs: 5, timers })
    const stop = transport.stopExecution(key, 'e1')
    await Promise.resolve()
    fire()
    await expect(stop).rejects.toMatchObject({ code: 'timeout' })
  })

  it('calls a headers function per request', async () => {
    const headers = vi.fn(() => ({ authorization: 'Bearer alice' }))
    const fetch = vi.fn(async () => Response.json({ data: { cancelRequested: true } }))
    const transport = createTransport({
      baseUrl: '/rest/',
      fetch,
      headers,
      requestTimeoutMs: 1_000,
      timers: { setTimeout: () => 0, clearTimeout: () => {}, now: () => 0 },
    })
    await transport.stopExecution(key, 'e1')
    await transport.stopExecution(key, 'e2')
    expect(headers).toHaveBeenCalledTimes(2)
    expect(fetch).toHaveBeenLastCalledWith(
      '/rest/projects/p1/agents/v2/a1/chat/t1/executions/e2',
      expect.objectContaining({
        method: 'DELETE',
        headers: expect.objectContaining({ authorization: 'Bearer alice' }),
      }),
    )
  })
})
