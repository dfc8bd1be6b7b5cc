import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Pool } from 'pg'
import { query, transaction } from './db'
import { PostgresStoreError } from './errors'
import { parseRow, int, text } from './rows'

/** One migration: `NNN_name.sql`, applied once, in the order of `version`. */
export interface Migration {
  version: number
  name: string
  sql: string
}

const fileName = /^(\d{3})_([a-z0-9_]+)\.sql$/
// Any fixed number: every instance of every version takes the same lock.
const migrationLock = 7_304_726_100

/**
 * The folder of the package's migrations, `src/postgres/migrations` (shipped as files in the
 * package): found from this module up to the package's root, so that it is the same folder
 * whether this code runs from `src/` or from a build in `dist/`.
 */
export function migrationsFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes('"@preview-chat/server"'))
      return join(dir, 'src/postgres/migrations')
    const parent = dirname(dir)
    if (parent === dir) throw new Error('The @preview-chat/server package root was not found.')
    dir = parent
  }
}

/** The migrations of `folder` (the package's by default), in order. */
export function readMigrations(folder: string = migrationsFolder()): Migration[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => {
      const match = fileName.exec(name)
      if (!match)
        throw new PostgresStoreError(
          'migration_invalid',
          `${join(folder, name)} is not named NNN_name.sql (three digits, then lowercase words).`,
        )
      return { version: Number(match[1]), name, sql: readFileSync(join(folder, name), 'utf8') }
    })
}

const checksum = (sql: string) => createHash('sha256').update(sql).digest('hex')

const appliedRow = { version: int, checksum: text }

/**
 * Brings the database's schema up to date: applies, in one transaction, each migration not yet
 * recorded in `preview_chat_migrations`, in order. Several instances starting at once migrate
 * once: each takes the same transaction-scoped advisory lock first, so the second finds the
 * first's work recorded. A migration applied before whose file changed since is refused
 * (`migration_changed`). A version the database has and this code does not (a newer instance
 * migrated it) is left as it is. Returns the names of the migrations it applied.
 */
export async function migrate(
  pool: Pool,
  migrations: readonly Migration[] = readMigrations(),
): Promise<string[]> {
  return transaction(pool, async (client) => {
    await query(client, 'SELECT pg_advisory_xact_lock($1)', [migrationLock])
    await query(
      client,
      `CREATE TABLE IF NOT EXISTS preview_chat_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`,
    )
    const rows = await query(client, 'SELECT version, checksum FROM preview_chat_migrations')
    const applied = new Map(
      rows
        .map((row) => parseRow(row, appliedRow, 'preview_chat_migrations'))
        .map((row) => [row.version, row.checksum]),
    )
    const done: string[] = []
    for (const migration of migrations) {
      const sum = checksum(migration.sql)
      const recorded = applied.get(migration.version)
      if (recorded === sum) continue
      if (recorded !== undefined)
        throw new PostgresStoreError(
          'migration_changed',
          `Migration ${migration.name} differs from the one this database applied. Restore the file as it shipped; put a new change in a new migration.`,
        )
      await query(client, migration.sql)
      await query(
        client,
        'INSERT INTO preview_chat_migrations (version, name, checksum) VALUES ($1, $2, $3)',
        [migration.version, migration.name, sum],
      )
      done.push(migration.name)
    }
    return done
  })
}
