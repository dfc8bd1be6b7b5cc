import { Suspense } from 'react'
import { ModuleClientChat } from '../ModuleClientChat'

interface Props {
  params: Promise<{ threadId: string }>
  searchParams: Promise<{ new?: string }>
}

/** `/e2e/module-client/<id>[?new=1]`: a thread through a module-level client (for the e2e). */
export default function ModuleClientPage({ params, searchParams }: Props) {
  return (
    <Suspense>
      <Render params={params} searchParams={searchParams} />
    </Suspense>
  )
}

async function Render({ params, searchParams }: Props) {
  const { threadId } = await params
  const query = await searchParams
  return <ModuleClientChat threadId={threadId} isNew={query.new === '1'} />
}
