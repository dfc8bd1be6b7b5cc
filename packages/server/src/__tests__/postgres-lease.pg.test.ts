import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ExecutionRecord } from '../store/types'
import { startLeaseKeeper, type LeaseKeeper } from '../store/lease-keeper'
import { createPostgresStore } from '../postgres/store'
import { freshDatabase } from './postgres-harness'

const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

async function instance(url: string, mainId: string, leaseMs: number) {
  const store = await createPostgresStore({ connectionString: url })
  const swept: ExecutionRecord[][] = []
  const keeper = startLeaseKeeper({ store, mainId, leaseMs, onSweep: (ended) => swept.push(ended) })
  await keeper.ready
  const stop = async () => {
    await keeper.stop()
    await store.close()
  }
  closing.push(stop)
  return { store, swept, keeper: keeper as LeaseKeeper, stop }
}

const key = { ownerId: 'alice', projectId: 'p1', agentId: 'a1', threadId: 't1' }

describe('a turn whose instance died ends [R-STORE-LEASE]', () => {
  it("another instance's sweep ends it as error, by the database's clock; the text stays", async () => {
    const url = await freshDatabase()
    const leaseMs = 50
    const a = await instance(url, 'main-a', leaseMs)
    const b = await instance(url, 'main-b', leaseMs)
    const admitted = await a.store.admitTurn({
      thread: key,
      create: true,
      exclusive: true,
      execution: {
        id: 'turn-1',
        mainId: 'main-a',
        kind: 'message',
        startedAt: new Date().toISOString(),
      },
    })
    expect(admitted.ok).toBe(true)
    await a.store.recordMessages('turn-1', [
      {
        id: 'turn-1:assistant',
        role: 'assistant',
        content: [{ type: 'text', text: 'The answer so far' }],
        executionId: 'turn-1',
        executionStatus: 'running',
        createdAt: new Date().toISOString(),
      },
    ])
    // While main-a renews, main-b sweeps past several lease lifetimes and ends nothing.
    await vi.waitFor(() => expect(b.swept.length).toBeGreaterThanOrEqual(8), { timeout: 20_000 })
    expect(b.swept.flat()).toEqual([])
    expect(await b.store.readExecution('turn-1')).toMatchObject({ status: 'running' })

    // main-a dies: no more renewals (its pool closes too, as a killed process's sockets do).
    await a.stop()
    const sweepsBefore = b.swept.length
    await vi.waitFor(() => expect(b.swept.flat()).toHaveLength(1), { timeout: 20_000 })
    expect(b.swept.flat()[0]).toMatchObject({
      id: 'turn-1',
      status: 'error',
      errorCode: 'instance_lost',
    })
    // Within a few lease periods of the last renewal: a lease lasts three, one sweep each period.
    expect(b.swept.length - sweepsBefore).toBeLessThanOrEqual(6)
    const thread = await b.store.readThread(key)
    expect(thread?.activeExecutionId).toBeNull()
    expect(thread?.messages).toMatchObject([
      {
        content: [{ type: 'text', text: 'The answer so far' }],
        executionStatus: 'error',
        executionError: expect.stringContaining('stopped'),
      },
    ])
    // The gate reopens: main-b runs the next message.
    const next = await b.store.admitTurn({
      thread: key,
      create: false,
      exclusive: true,
      execution: {
        id: 'turn-2',
        mainId: 'main-b',
        kind: 'message',
        startedAt: '2026-01-01T00:00:00.000Z',
      },
    })
    expect(next.ok).toBe(true)
  })
})
