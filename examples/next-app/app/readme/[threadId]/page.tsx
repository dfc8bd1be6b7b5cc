import { Suspense } from 'react'
// The README's complete page, pasted as it is.
import { App } from './App'

interface ReadmePageProps {
  params: Promise<{ threadId: string }>
  searchParams: Promise<{ user?: string }>
}

/**
 * A thread's page: the README's `App` for the thread in the URL and `?user=` (the reference
 * server's alice, bob or carol; another name is a misconfigured page, which says so on screen).
 */
export default function ReadmePage({ params, searchParams }: ReadmePageProps) {
  return (
    <Suspense>
      <Readme params={params} searchParams={searchParams} />
    </Suspense>
  )
}

async function Readme({ params, searchParams }: ReadmePageProps) {
  const { threadId } = await params
  const { user = 'alice' } = await searchParams
  return <App threadId={threadId} user={user} />
}
