import { Suspense } from 'react'
// The assistant-ui README's complete page, pasted as it is (written by readme-page.mjs).
import { App } from './App'

interface ReadmePageProps {
  params: Promise<{ threadId: string }>
  searchParams: Promise<{ user?: string }>
}

/**
 * `/readme/<id>?user=<name>`: the README's page in a Next app, with only what a user of it writes
 * besides (this file and the `/rest` rewrite). The user is passed as given: an unknown one is the
 * misconfigured page, which must say so on screen.
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
