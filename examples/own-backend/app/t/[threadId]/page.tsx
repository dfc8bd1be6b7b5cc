import { cookies } from 'next/headers'
import { redirect } from 'next/navigation'
import { sessionCookie, userOfSession } from '../../../lib/session'
import { Chat } from '../../Chat'

interface ThreadPageProps {
  params: Promise<{ threadId: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}

/** A thread of the signed-in user; the chat reads it (and follows a running turn) in the browser. */
export default async function ThreadPage({ params, searchParams }: ThreadPageProps) {
  const user = await userOfSession((await cookies()).get(sessionCookie)?.value)
  if (user === null) redirect('/signin')
  const { threadId } = await params
  const query = await searchParams
  return (
    <div className="app">
      <header className="app-header">
        <h1>Your own backend</h1>
        <p>Signed in as {user}</p>
      </header>
      <Chat key={user} user={user} threadId={threadId} isNew={query.new === '1'} />
    </div>
  )
}
