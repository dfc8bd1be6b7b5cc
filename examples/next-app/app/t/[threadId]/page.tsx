import { Chat } from '../../Chat'
import { userOf, users } from '../../users'

/**
 * A thread, rendered on the server: the shell and an empty transcript. In the browser `Chat`
 * reads the recorded transcript and follows a running turn (after a reload too).
 */
export default async function ThreadPage({
  params,
  searchParams,
}: {
  params: Promise<{ threadId: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}) {
  const { threadId } = await params
  const query = await searchParams
  const user = userOf(query.user)
  return (
    <div className="app">
      <header className="app-header">
        <h1>preview-chat on Next.js</h1>
        {/* A plain GET form: switching users opens a new thread of theirs, with or without JS. */}
        <form action="/" className="user-picker">
          <label htmlFor="user">User</label>
          <select id="user" name="user" defaultValue={user}>
            {users.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
          <button type="submit">Switch</button>
        </form>
      </header>
      <Chat key={user} user={user} threadId={threadId} isNew={query.new === '1'} />
    </div>
  )
}
