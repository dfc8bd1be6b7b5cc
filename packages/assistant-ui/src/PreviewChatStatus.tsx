import type { PreviewChat } from '@preview-chat/react'
import { usePreviewChatExtras } from './extras'

/**
 * What is wrong with the thread, in words, or `null`: a read that failed (a 401 of a page that
 * sends no credentials, a server that is down; the session retries and keeps what it showed)
 * and the last action that failed (a refused message, a Stop, an answer). assistant-ui has no
 * place for either: its errors belong to messages.
 */
export function statusProblem(
  chat: Pick<PreviewChat, 'readError' | 'error' | 'notFound'>,
): string | null {
  if (chat.error) return chat.error.message
  // A 404 is no readError (a thread that does not exist yet: its first message creates it), so a
  // readError is a read that failed, on a new thread too.
  if (chat.readError) return `Cannot read this thread (retrying): ${chat.readError.message}`
  return null
}

/**
 * One line for the thread's session, inside `<AssistantRuntimeProvider>`: empty while all is
 * well, the problem (`statusProblem`) as an alert when not. `data-status` holds the session's
 * status (`recovering`, `idle`, `streaming`…) for styles and tests.
 */
export function PreviewChatStatus({ className }: { className?: string }) {
  const { chat } = usePreviewChatExtras()
  const problem = statusProblem(chat)
  return (
    <div
      className={className}
      data-status={chat.status}
      data-testid="preview-chat-status"
      role={problem ? 'alert' : 'status'}
    >
      {problem}
    </div>
  )
}
