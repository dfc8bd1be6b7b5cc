import { QueryClientProvider, type QueryClient } from '@tanstack/react-query'
import {
  PreviewChatProvider,
  usePreviewChat,
  type Message,
  type PreviewChatClient,
} from '@preview-chat/react'

function MessageText({ message }: { message: Message }) {
  const text = message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
  return (
    <li>
      {message.role}: {text}
    </li>
  )
}

// `isNew`: the app just minted this id (a new chat), so no read asks for a thread that does not
// exist yet; its first message creates it. Leave it out for a thread from a list or a URL.
function Chat({ threadId, isNew }: { threadId: string; isNew?: boolean }) {
  const chat = usePreviewChat({ projectId: 'demo-project', agentId: 'demo-agent', threadId, isNew })
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        void chat.submit()
      }}
    >
      {/* What failed (the server down, a 401, a turn refused), and what to do; the draft is kept. */}
      {chat.error && (
        <p role="alert">
          {chat.error.message}{' '}
          <button type="button" onClick={chat.clearError}>
            Dismiss
          </button>
        </p>
      )}
      {/* Once the record is known: a long thread is then built off the page and put in at once. */}
      {chat.loaded && (
        <ol aria-label="Conversation">
          {chat.messages.map((message) => (
            <MessageText key={message.id} message={message} />
          ))}
        </ol>
      )}
      <textarea
        aria-label="Message"
        value={chat.draft}
        onChange={(event) => chat.setDraft(event.target.value)}
      />
      <button disabled={!chat.canSubmit}>Send</button>
      {chat.canStop && (
        <button type="button" onClick={() => void chat.stop()}>
          Stop
        </button>
      )}
    </form>
  )
}

export interface AppProps {
  /** The page's clients, made once (see main.tsx): the same ones that started the first read. */
  client: PreviewChatClient
  queryClient: QueryClient
  threadId: string
  isNew?: boolean
}

export function App({ client, queryClient, threadId, isNew }: AppProps) {
  return (
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>
        <Chat threadId={threadId} isNew={isNew} />
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}
