import { Suspense } from 'react'
import { Chat } from '../../Chat'

interface ThreadPageProps {
  params: Promise<{ threadId: string }>
  searchParams: Promise<Record<string, string | string[] | undefined>>
}

/**
 * `/t/<id>`: a thread; `/t/<id>?new`: one the app just minted (a link to a new chat:
 * `/t/${crypto.randomUUID()}?new`). What reads the request (`params`, `searchParams`) is awaited
 * inside `<Suspense>`, as `cacheComponents` asks; the shell around it is prerendered.
 */
export default function ThreadPage({ params, searchParams }: ThreadPageProps) {
  return (
    <main>
      <h1>Chat</h1>
      <Suspense fallback={<p>Loading the thread…</p>}>
        <Thread params={params} searchParams={searchParams} />
      </Suspense>
    </main>
  )
}

async function Thread({ params, searchParams }: ThreadPageProps) {
  const { threadId } = await params
  const query = await searchParams
  return <Chat threadId={threadId} isNew={'new' in query} />
}
