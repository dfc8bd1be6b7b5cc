import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { migrate, readMigrations } from '../postgres/migrate'
import { PostgresStoreError } from '../postgres/errors'
import { freshDatabase } from './postgres-harness'

const pools: pg.Pool[] = []
const poolOf = (url: string) => {
  const pool = new pg.Pool({ connectionString: url })
  pools.push(pool)
  return pool
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()))
})

const tables = async (pool: pg.Pool) =>
  (
    await pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
  ).rows.map((row) => row.table_name)

describe('the Postgres schema and its migrations [R-STORE-PG-MIGRATIONS]', () => {
  it('applies the shipped migrations once, in order, and records them', async () => {
    const pool = poolOf(await freshDatabase())
    const shipped = readMigrations()
    expect(shipped.map((m) => m.version)).toEqual(shipped.map((_, index) => index + 1))
    expect(await migrate(pool)).toEqual(shipped.map((m) => m.name))
    expect(await migrate(pool)).toEqual([])
    expect(await tables(pool)).toEqual([
      'preview_chat_executions',
      'preview_chat_instances',
      'preview_chat_message_ids',
      'preview_chat_messages',
      'preview_chat_migrations',
      'preview_chat_queue_items',
      'preview_chat_runs',
      'preview_chat_threads',
    ])
  })

  it('migrates once when several instances start at once', async () => {
    const url = await freshDatabase()
    const results = await Promise.all([0, 1, 2, 3].map(() => migrate(poolOf(url))))
    const applied = results.filter((names) => names.length > 0)
    expect(applied).toHaveLength(1)
    const pool = poolOf(url)
    const { rows } = await pool.query('SELECT version FROM preview_chat_migrations')
    expect(rows).toHaveLength(readMigrations().length)
  })

  it('refuses a migration whose file changed after it was applied, and applies a new one', async () => {
    const pool = poolOf(await freshDatabase())
    const shipped = readMigrations()
    await migrate(pool, shipped)
    const next = {
      version: shipped.length + 1,
      name: '999_extra.sql',
      sql: 'CREATE TABLE extra (x int)',
    }
    expect(await migrate(pool, [...shipped, next])).toEqual(['999_extra.sql'])
    const edited = [{ ...shipped[0]!, sql: `${shipped[0]!.sql}\n-- edited` }]
    const error = await migrate(pool, edited).catch((caught: unknown) => caught)
    expect(PostgresStoreError.isInstance(error) && error.code).toBe('migration_changed')
  })

  it('leaves nothing behind when a migration fails (one transaction)', async () => {
    const pool = poolOf(await freshDatabase())
    const broken = [
      { version: 1, name: '001_ok.sql', sql: 'CREATE TABLE first_table (x int)' },
      { version: 2, name: '002_bad.sql', sql: 'CREATE TABLE broken (x no_such_type)' },
    ]
    await expect(migrate(pool, broken)).rejects.toThrow(/no_such_type/)
    expect(await tables(pool)).toEqual([])
  })
})
