import { redirect } from 'next/navigation'
import { userOf } from './users'

/**
 * A new thread for the user: its id is minted here and marked `new=1` (nothing to read yet), and
 * its first message creates it on the server.
 */
export default async function Home({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const user = userOf((await searchParams).user)
  redirect(`/t/${crypto.randomUUID()}?user=${user}&new=1`)
}
