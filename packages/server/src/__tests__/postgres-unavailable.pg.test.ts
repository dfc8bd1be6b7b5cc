import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startPostgres, type TestPostgres } from '../../../../scripts/services/postgres.mjs'
import { PostgresStoreError } from '../postgres/errors'
import { createPostgresStore, type PostgresStore } from '../postgres/store'

// A Postgres of this file's own, to stop and start: the shared one stays up for the others.
let postgres: TestPostgres
beforeAll(async () => {
  postgres = await startPostgres()
})
afterAll(async () => {
  await postgres?.stop()
})

const key = { ownerId: 'alice', projectId: 'p1', agentId: 'a1', threadId: 't1' }
const draft = (id: string) => ({
  id,
  mainId: 'main-a',
  kind: 'message' as const,
  startedAt: '2026-01-01T00:00:00.000Z',
})

/** What `promise` rejected with (failing the test if it resolved). */
async function rejection(promise: Promise<unknown>): Promise<PostgresStoreError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (caught: unknown) => caught,
  )
  expect(PostgresStoreError.isInstance(error)).toBe(true)
  return error as PostgresStoreError
}

describe('Postgres unreachable: a typed, retryable error, then recovery [R-STORE-PG-UNAVAILABLE]', () => {
  it('answers store_unavailable while Postgres is down, and the record is whole when it returns', async () => {
    const poolErrors: Error[] = []
    const store: PostgresStore = await createPostgresStore({
      connectionString: postgres.url,
      onPoolError: (error) => poolErrors.push(error),
    })
    try {
      expect(
        (
          await store.admitTurn({
            thread: key,
            create: true,
            exclusive: true,
            execution: draft('e1'),
          })
        ).ok,
      ).toBe(true)

      await postgres.down()
      // Idle connections were ended by the server: heard, never thrown into the process.
      expect(poolErrors.length).toBeGreaterThan(0)
      const read = await rejection(store.readThread(key))
      expect(read).toMatchObject({ code: 'store_unavailable', retryable: true })
      expect(read.message).toMatch(/Retry later/)
      const admit = await rejection(
        store.admitTurn({ thread: key, create: true, exclusive: true, execution: draft('e2') }),
      )
      expect(admit.code).toBe('store_unavailable')
      await expect(store.renewLease('main-a', 1_000)).rejects.toMatchObject({
        code: 'store_unavailable',
      })
      // A store cannot start without its database either.
      await expect(createPostgresStore({ connectionString: postgres.url })).rejects.toMatchObject({
        code: 'store_unavailable',
      })

      await postgres.up()
      // Recovery: the pool connects again; nothing recorded was lost, and the turn can end.
      expect(await store.readThread(key)).toMatchObject({ activeExecutionId: 'e1' })
      expect(await store.listExecutions()).toHaveLength(1)
      expect(
        await store.endExecution({
          executionId: 'e1',
          status: 'success',
          endedAt: '2026-01-01T00:00:01.000Z',
          messages: [],
        }),
      ).toMatchObject({ status: 'success' })

      // A restart between two requests: the idle connections it cut are replaced, unnoticed.
      await postgres.restart()
      expect(await store.readThread(key)).toMatchObject({ activeExecutionId: null })
    } finally {
      await store.close()
    }
  })

  it('a malformed row is not retryable; only an unreachable database is', () => {
    expect(new PostgresStoreError('malformed_row', 'x').retryable).toBe(false)
    expect(new PostgresStoreError('store_unavailable', 'x').retryable).toBe(true)
  })
})
