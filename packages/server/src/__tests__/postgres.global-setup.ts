/**
 * The vitest global setup of the `server-pg` project: a real Postgres for the `*.pg.test.ts`
 * files (scripts/services/postgres.mjs: Debian's postgresql, installed when missing, a fresh
 * cluster on a loopback port, removed at the end), whose URL the tests read from
 * `PREVIEW_CHAT_TEST_PG_URL`. Where that variable is set already (a CI service container, a
 * developer's own server), the tests use that database and nothing is started.
 */
import { startPostgres } from '../../../../scripts/services/postgres.mjs'

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.PREVIEW_CHAT_TEST_PG_URL) return undefined
  const postgres = await startPostgres()
  process.env.PREVIEW_CHAT_TEST_PG_URL = postgres.url
  return () => postgres.stop()
}
