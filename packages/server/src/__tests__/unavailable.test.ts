import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend, type PreviewChatBackend } from '../backend'
import { createMemoryBus } from '../bus/memory'
import type { PreviewChatBus } from '../bus/types'
import { createMemoryStore } from '../store/memory'
import type { PreviewChatStore } from '../store/types'
import { retryWhileUnavailable } from '../unavailable'
import { chatPath, stopPath, TurnReader } from './harness'

// The typed 503 of a store or bus that is away, in one process (the real Postgres and Redis
// restarts are in deploy-faults.deploy.test.ts). The errors are shaped as the Postgres store's and
// the Redis bus's, with a detail no answer may show.
const away = (code: string) =>
  Object.assign(new Error(`${code}: connect ECONNREFUSED db.internal:5432`), {
    code,
    retryable: true,
  })

const backends: PreviewChatBackend[] = []
afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()))
})

function backendOn(store: PreviewChatStore, bus: PreviewChatBus, mainId: string) {
  const backend = createPreviewChatBackend({
    dev: true,
    store,
    bus,
    mainId,
    deltaMs: 5,
    leaseMs: false,
  })
  backends.push(backend)
  return backend
}
const request = (path: string, init: RequestInit = {}) =>
  new Request(`http://127.0.0.1${path}`, {
    ...init,
    headers: { Authorization: 'Bearer alice', 'Content-Type': 'application/json' },
  })

describe('a store or bus that is away answers a typed 503 with Retry-After', () => {
  it('a read when the store is away: store_unavailable, no detail of the cause [R-DEPLOY-PG-RESTART]', async () => {
    const store = createMemoryStore()
    const failing: PreviewChatStore = {
      ...store,
      readThread: () => Promise.reject(away('store_unavailable')),
    }
    const backend = backendOn(failing, createMemoryBus(), 'main-1')
    const answer = await backend.fetch(request(`${chatPath}/t1/messages`))
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/)
    const text = await answer.text()
    expect(JSON.parse(text)).toMatchObject({ code: 'store_unavailable' })
    expect(text).not.toContain('db.internal')
  })

  it('a Stop the bus cannot relay: 503 relay_timeout, never cancelRequested false [R-DEPLOY-REDIS-RESTART]', async () => {
    const store = createMemoryStore()
    const bus = createMemoryBus()
    const cutOff: PreviewChatBus = {
      ...bus,
      cancel: () => Promise.reject(away('relay_timeout')),
    }
    const owner = backendOn(store, bus, 'main-1')
    const other = backendOn(store, cutOff, 'main-2')
    const stream = new TurnReader(
      await owner.fetch(
        request(chatPath, {
          method: 'POST',
          body: JSON.stringify({ message: '/long 100000', sessionId: 't1', newSession: true }),
        }),
      ),
    )
    const { executionId } = await stream.until('execution-started')
    const answer = await other.fetch(request(stopPath('t1', executionId), { method: 'DELETE' }))
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await answer.json()).toMatchObject({ code: 'relay_timeout' })
    const local = await owner.fetch(request(stopPath('t1', executionId), { method: 'DELETE' }))
    expect(await local.json()).toEqual({ data: { cancelRequested: true } })
    await stream.rest()
  })

  it('an operation is retried while unavailable, and any other error is thrown at once [R-DEPLOY-PG-RESTART]', async () => {
    const timers = { setTimeout: (run: () => void) => queueMicrotask(run) }
    let calls = 0
    const flaky = () =>
      ++calls < 3 ? Promise.reject(away('store_unavailable')) : Promise.resolve('ok')
    await expect(retryWhileUnavailable(flaky, timers)).resolves.toBe('ok')
    expect(calls).toBe(3)
    calls = 0
    const broken = () => (++calls, Promise.reject(new Error('malformed')))
    await expect(retryWhileUnavailable(broken, timers)).rejects.toThrow('malformed')
    expect(calls).toBe(1)
    calls = 0
    const down = () => (++calls, Promise.reject(away('store_unavailable')))
    await expect(retryWhileUnavailable(down, timers, 4)).rejects.toMatchObject({
      code: 'store_unavailable',
    })
    expect(calls).toBe(4)
  })
})
