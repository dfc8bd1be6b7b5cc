'use client'

import { createPreviewChatClient, PreviewChatProvider, usePreviewChat } from '@preview-chat/react'
import { projectId, agentId } from '../../Chat'

// Not a pattern to copy (app/Chat.tsx makes its client per mount): a client at module level, as
// the READMEs once showed, so that e2e/next-app.spec.ts can check that two requests Next renders
// through this one module share no session.
const client = createPreviewChatClient({ baseUrl: '/rest', push: false })

/** The session's status and whether it has read, as one line. */
export function ModuleClientChat({ threadId, isNew }: { threadId: string; isNew: boolean }) {
  return (
    <PreviewChatProvider client={client}>
      <Status threadId={threadId} isNew={isNew} />
    </PreviewChatProvider>
  )
}

function Status({ threadId, isNew }: { threadId: string; isNew: boolean }) {
  const chat = usePreviewChat({ projectId, agentId, threadId, isNew })
  return <p data-testid="module-client">{`${chat.status} ${String(chat.loaded)}`}</p>
}
