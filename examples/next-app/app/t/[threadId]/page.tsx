import { Suspense } from 'react'
import { Chat } from '../../Chat'
import { userOf, users } from '../../users'

interface ThreadPageProps {
  params: Promise<{ threadId: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}

/**
 * A thread, rendered on the server: the shell and an empty transcript. In the browser `Chat`
 * reads the recorded transcript and follows a running turn (after a reload too). Under
 * `cacheComponents` the shell is prerendered; what reads the request (`await params`,
 * `await searchParams`) sits inside `<Suspense>`, or `next dev` errors and `next build` fails.
 */
export default function ThreadPage({ params, searchParams }: ThreadPageProps) {
  return (
    <div className="app">
      <Suspense fallback={<Header />}>
        <Thread params={params} searchParams={searchParams} />
      </Suspense>
    </div>
  )
}

async function Thread({ params, searchParams }: ThreadPageProps) {
  const { threadId } = await params
  const query = await searchParams
  const user = userOf(query.user)
  return (
    <>
      <Header user={user} />
      <Chat key={user} user={user} threadId={threadId} isNew={query.new === '1'} />
    </>
  )
}

/** The page's header; its user picker is a plain GET form (a new thread of theirs, JS or not). */
function Header({ user }: { user?: string }) {
  return (
    <header className="app-header">
      <h1>preview-chat on Next.js</h1>
      <form action="/" className="user-picker">
        <label htmlFor="user">User</label>
        <select id="user" name="user" defaultValue={user ?? users[0]}>
          {users.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
        <button type="submit">Switch</button>
      </form>
    </header>
  )
}
