import { usePreviewChat, type PreviewChatError, type Suspension } from '@preview-chat/react'
import { useCallback, useEffect } from 'react'
import {
  Composer,
  ErrorBanner,
  QueueList,
  StatusBar,
  Transcript,
  type ErrorBannerKind,
} from './components'

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

  const { resume } = chat
  // Stable, so that memoised messages are not rendered again on every state change.
  const answer = useCallback(
    (suspension: Suspension, approved: boolean) => void resume(suspension, { approved }),
    [resume],
  )
  const error = chat.error ? bannerFor(chat.error) : null
  // With `queue()` (`?queue=1`) a message sent while the thread is busy waits in the queue: Send
  // needs only text. Without it, the gate: Send waits for the thread (`canSubmit`).
  const queues = chat.queue !== undefined
  const canSubmit = queues ? !chat.notFound && chat.draft.trim() !== '' : chat.canSubmit

  return (
    <main className="chat" aria-label="Chat">
      <StatusBar status={chat.status} lastSyncedAt={chat.lastSyncedAt} user={user} />
      {chat.notFound && (
        <ErrorBanner
          kind="not_found"
          message={`No conversation ${threadId} for ${user} yet (or it is another user's): your first message starts one.`}
        />
      )}
      {chat.server.keepsTurnOnDisconnect === false && (
        <p className="server-note" role="note" data-testid="server-note">
          This server cancels a turn when its page reloads or loses the connection
          {chat.server.stopsByExecutionId === false &&
            ', and only the tab that sent it can stop it'}
          .
        </p>
      )}
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
      {!chat.notFound && (
        <Transcript
          messages={chat.messages}
          loaded={chat.loaded}
          openSuspensions={chat.openSuspensions}
          busy={chat.isRunning}
          onAnswer={chat.status === 'idle' ? answer : undefined}
        />
      )}
      {chat.queue && (
        <QueueList
          items={chat.queue}
          paused={chat.queuePaused ?? false}
          onEdit={(id, text) => chat.editQueued?.(id, text)}
          onRemove={(id) => chat.removeQueued?.(id)}
          onSendNow={(id) => chat.sendQueuedNow?.(id)}
          onResume={() => chat.resumeQueue?.()}
        />
      )}
      <Composer
        draft={chat.draft}
        onDraftChange={chat.setDraft}
        onSubmit={() => {
          onStarted(chat.draft.trim().slice(0, 60))
          void chat.submit()
        }}
        canSubmit={canSubmit}
        isRunning={chat.isRunning}
        queues={queues}
        canStop={chat.canStop}
        onStop={() => void chat.stop()}
        stopping={chat.status === 'stopping'}
      />
    </main>
  )
}
