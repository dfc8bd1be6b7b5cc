import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type PostgresStore } from '../postgres/store'
import { describeStoreSuite } from '../store/suite'
import { freshDatabase } from './postgres-harness'

let url = ''
beforeAll(async () => {
  url = await freshDatabase()
  // Migrated once here; each store of the suite starts on emptied tables.
  await (await createPostgresStore({ connectionString: url })).close()
})

const tables = [
  'preview_chat_threads',
  'preview_chat_executions',
  'preview_chat_messages',
  'preview_chat_runs',
  'preview_chat_message_ids',
  'preview_chat_queue_items',
  'preview_chat_instances',
]

async function emptyStore(): Promise<PostgresStore> {
  const store = await createPostgresStore({ connectionString: url, migrate: false })
  await store.pool.query(`TRUNCATE ${tables.join(', ')} RESTART IDENTITY`)
  return store
}

describeStoreSuite('postgres [R-SERVER-STORE]', async () => {
  const store = await emptyStore()
  return { store, close: () => store.close() }
})

describe('the Postgres store across instances [R-STORE-PG-ONE-TURN]', () => {
  const stores: PostgresStore[] = []
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()))
  })

  it('two instances (two pools) admit one turn of a thread at once: one turn, one refusal', async () => {
    stores.push(await emptyStore(), await createPostgresStore({ connectionString: url }))
    const [a, b] = stores as [PostgresStore, PostgresStore]
    const key = { ownerId: 'alice', projectId: 'p1', agentId: 'a1', threadId: 'race' }
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(
        [a, b].map((store, index) =>
          store.admitTurn({
            thread: key,
            create: true,
            exclusive: true,
            execution: {
              id: `race-${round}-${index}`,
              mainId: `main-${index}`,
              kind: 'message',
              startedAt: new Date(Date.UTC(2026, 0, 1, 0, round, index)).toISOString(),
            },
          }),
        ),
      )
      const won = results.flatMap((result) => (result.ok ? [result.execution.id] : []))
      expect(won).toHaveLength(1)
      expect(results.filter((result) => !result.ok)).toEqual([
        { ok: false, reason: 'turn_already_running' },
      ])
      expect((await b.readThread(key))?.activeExecutionId).toBe(won[0])
      await a.endExecution({
        executionId: won[0]!,
        status: 'success',
        endedAt: new Date(Date.UTC(2026, 0, 1, 0, round, 30)).toISOString(),
        messages: [],
      })
    }
    expect(await a.listThreads()).toHaveLength(1)
    expect(await b.listExecutions()).toHaveLength(5)
  })
})

describe("an owner's running turns, limited across instances [R-STORE-PG-ONE-TURN]", () => {
  it('two instances admitting two threads of one owner at once, limit 1: one turn', async () => {
    const a = await emptyStore()
    const b = await createPostgresStore({ connectionString: url })
    try {
      for (let round = 0; round < 5; round++) {
        const results = await Promise.all(
          [a, b].map((store, index) =>
            store.admitTurn({
              thread: { ownerId: 'bob', projectId: 'p1', agentId: 'a1', threadId: `t${index}` },
              create: true,
              exclusive: true,
              maxRunningPerOwner: 1,
              execution: {
                id: `limit-${round}-${index}`,
                mainId: `main-${index}`,
                kind: 'message',
                startedAt: '2026-01-01T00:00:00.000Z',
              },
            }),
          ),
        )
        const won = results.flatMap((result) => (result.ok ? [result.execution.id] : []))
        expect(won).toHaveLength(1)
        expect(results.filter((result) => !result.ok)).toEqual([
          { ok: false, reason: 'too_many_turns' },
        ])
        await b.endExecution({
          executionId: won[0]!,
          status: 'success',
          endedAt: '2026-01-01T00:00:01.000Z',
          messages: [],
        })
      }
      expect(await a.countRunning('bob')).toBe(0)
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })
})

describe('rows read back are parsed [R-STORE-PG-PARSED]', () => {
  it('a malformed message row is a typed error, never a record', async () => {
    const store = await emptyStore()
    try {
      const key = { ownerId: 'alice', projectId: 'p1', agentId: 'a1', threadId: 'bad' }
      const admitted = await store.admitTurn({
        thread: key,
        create: true,
        exclusive: true,
        execution: {
          id: 'bad-1',
          mainId: 'm',
          kind: 'message',
          startedAt: '2026-01-01T00:00:00.000Z',
        },
      })
      expect(admitted.ok).toBe(true)
      await store.recordMessages('bad-1', [
        {
          id: 'bad-1:user',
          role: 'user',
          content: [{ type: 'text', text: 'hi' }],
          executionId: 'bad-1',
          executionStatus: 'running',
          createdAt: '2026-01-01T00:00:00.000Z',
        },
      ])
      expect((await store.readThread(key))?.messages).toHaveLength(1)
      // Another writer (a hand edit, another version) leaves a part without its text.
      await store.pool.query(
        `UPDATE preview_chat_messages SET content = '[{"type":"text","text":42}]'::jsonb`,
      )
      const error = await store.readThread(key).catch((caught: unknown) => caught)
      expect(error).toMatchObject({ name: 'PostgresStoreError', code: 'malformed_row' })
      expect(String((error as Error).message)).toMatch(/preview_chat_messages/)
      // A suspended run whose payload lost its tool call's id.
      await store.pool.query(`UPDATE preview_chat_messages SET content = '[]'::jsonb`)
      const payload = { toolCallId: 'c1', runId: 'run-1', toolName: 'approve', input: {} }
      await store.endExecution({
        executionId: 'bad-1',
        status: 'success',
        endedAt: '2026-01-01T00:00:01.000Z',
        messages: [],
        suspension: payload,
      })
      expect((await store.readRun('run-1', key))?.payload).toEqual(payload)
      await store.pool.query(`UPDATE preview_chat_runs SET payload = payload - 'toolCallId'`)
      await expect(store.readRun('run-1', key)).rejects.toMatchObject({ code: 'malformed_row' })
      await expect(store.readThread(key)).rejects.toMatchObject({ code: 'malformed_row' })
    } finally {
      await store.close()
    }
  })
})

describe('what Postgres cannot hold [R-STORE-PG-NUL]', () => {
  it('records a NUL character as U+FFFD, and a written-out \\u0000 as it is', async () => {
    const store = await emptyStore()
    try {
      const key = { ownerId: 'alice', projectId: 'p1', agentId: 'a1', threadId: 'nul\u0000' }
      const execution = { id: 'n1', mainId: 'm', kind: 'message' as const, startedAt: 'x' }
      expect(
        (await store.admitTurn({ thread: key, create: true, exclusive: true, execution })).ok,
      ).toBe(true)
      await store.recordMessages('n1', [
        {
          id: 'n1:assistant',
          role: 'assistant',
          content: [
            { type: 'text', text: 'a\u0000b \\u0000 \\\u0000' },
            { type: 'tool-call', toolName: 't', toolCallId: 'c', input: { k: '\u0000' } },
          ],
          executionId: 'n1',
          executionStatus: 'running',
          createdAt: '2026-01-01T00:00:00.000Z',
        },
      ])
      const thread = await store.readThread(key)
      expect(thread?.messages[0]?.content).toEqual([
        { type: 'text', text: 'a\uFFFDb \\u0000 \\\uFFFD' },
        { type: 'tool-call', toolName: 't', toolCallId: 'c', input: { k: '\uFFFD' } },
      ])
      const queued = await store.enqueue({
        thread: key,
        create: false,
        message: 'q\u0000',
        createdAt: '2026-01-01T00:00:00.000Z',
      })
      expect(queued).toMatchObject({ ok: true, item: { message: 'q\uFFFD' } })
    } finally {
      await store.close()
    }
  })
})
