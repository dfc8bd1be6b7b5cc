import { usePreviewChat, type PreviewChatError, type Suspension } from '@preview-chat/react'
import { useEffect } from 'react'
import { Composer, ErrorBanner, StatusBar, Transcript, type ErrorBannerKind } from './components'

export const projectId = 'demo-project'
export const agentId = 'demo-agent'

export interface ChatViewProps {
  user: string
  threadId: string
  /** Minted here and never sent: there is no history to read. */
  isNew: boolean
  /** The first message of the thread was sent (or read): it exists on the server now. */
  onStarted: (title: string) => void
}

function bannerFor(error: PreviewChatError): { kind: ErrorBannerKind; message: string } {
  switch (error.code) {
    case 'turn_already_running':
      return { kind: 'turn_already_running', message: error.message }
    case 'forbidden':
      return {
        kind: 'error',
        message: 'This user may read but not send or stop (no agent:execute scope).',
      }
    default:
      return { kind: 'error', message: `${error.message} (${error.code})` }
  }
}

/** One thread, followed through `usePreviewChat`; everything it shows is a prop of a component. */
export function ChatView({ user, threadId, isNew, onStarted }: ChatViewProps) {
  const chat = usePreviewChat({ projectId, agentId, threadId, isNew })
  const firstUserText = chat.messages.find((m) => m.role === 'user')?.content[0]
  const title = firstUserText?.type === 'text' ? firstUserText.text : null

  useEffect(() => {
    if (title) onStarted(title.slice(0, 60))
  }, [title, onStarted])

  const answer = (suspension: Suspension, approved: boolean) => {
    void chat.resume(suspension, { approved })
  }
  const error = chat.error ? bannerFor(chat.error) : null

  return (
    <main className="chat" aria-label="Chat">
      <StatusBar status={chat.status} lastSyncedAt={chat.lastSyncedAt} user={user} />
      {chat.notFound ? (
        <ErrorBanner
          kind="not_found"
          message={`There is no conversation ${threadId} for ${user}: it does not exist, or it belongs to another user.`}
        />
      ) : (
        <>
          {chat.readError && (
            <ErrorBanner
              kind="read_failed"
              message={`Reading the recorded transcript failed (${chat.readError.message}). The last known transcript stays on screen; it is read again on its own (without end while a turn runs), and when the page comes back online.`}
              onRetry={() => void chat.refresh()}
            />
          )}
          {error && (
            <ErrorBanner kind={error.kind} message={error.message} onDismiss={chat.clearError} />
          )}
          <Transcript
            messages={chat.messages}
            openSuspensions={chat.openSuspensions}
            busy={chat.isRunning}
            onAnswer={chat.status === 'idle' ? answer : undefined}
          />
        </>
      )}
      <Composer
        draft={chat.draft}
        onDraftChange={chat.setDraft}
        onSubmit={() => {
          onStarted(chat.draft.trim().slice(0, 60))
          void chat.submit()
        }}
        canSubmit={chat.canSubmit && !chat.notFound}
        isRunning={chat.isRunning && !chat.notFound}
        onStop={() => void chat.stop()}
        stopping={chat.status === 'stopping'}
        disabled={chat.notFound}
      />
    </main>
  )
}
