/**
 * What the `*.pg.test.ts` files share: a fresh database of their own on the tests' Postgres (see
 * postgres.global-setup.ts), so that no test sees another's rows.
 */
import pg from 'pg'

/** The tests' Postgres, as the global setup gave it. */
export function testPostgresUrl(): string {
  const url = process.env.PREVIEW_CHAT_TEST_PG_URL
  if (!url)
    throw new Error(
      'PREVIEW_CHAT_TEST_PG_URL is not set: run the Postgres tests through their vitest project (npx vitest run --project server-pg), whose global setup starts Postgres.',
    )
  return url
}

let databases = 0

/** A new, empty database on the server at `serverUrl` (the tests' by default): its URL. */
export async function freshDatabase(serverUrl: string = testPostgresUrl()): Promise<string> {
  const name = `test_${process.pid}_${++databases}_${Math.random().toString(36).slice(2, 8)}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}
