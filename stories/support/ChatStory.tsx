import { createPreviewChatClient, ssePush, PreviewChatProvider } from '@preview-chat/react'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useCallback, useState, type CSSProperties, type ReactNode } from 'react'
// The example app's chat: its presentational components driven by the real `usePreviewChat`.
import { ChatView } from '../../examples/chat-app/src/ChatView'
import type { Scenario } from './scenario'

const frame: CSSProperties = { display: 'flex', flexDirection: 'column', height: '100vh' }
// A grid cell, as in the app's layout, so that `.chat` fills it and its transcript scrolls.
const pageCell: CSSProperties = {
  display: 'grid',
  gridTemplateRows: 'minmax(0, 1fr)',
  flex: 1,
  minHeight: 0,
}
const toolbar: CSSProperties = {
  display: 'flex',
  gap: '0.75rem',
  alignItems: 'center',
  padding: '0.5rem 1rem',
  borderBottom: '1px dashed var(--border)',
  color: 'var(--muted)',
  fontSize: '0.85rem',
}

/**
 * The chat of one thread as the example app shows it, in a story-only frame. "Reload page"
 * (offered by `reloadable` scenarios) remounts it with a fresh client and query cache, as a
 * reload of the page would.
 */
export function ChatStory({ scenario, tools }: { scenario: Scenario; tools?: ReactNode }) {
  const [page, setPage] = useState(1)
  const [started, setStarted] = useState(false)
  const onStarted = useCallback(() => setStarted(true), [])
  return (
    <div style={frame}>
      {scenario.reloadable && (
        <div style={toolbar} data-testid="story-toolbar">
          <button type="button" onClick={() => setPage((n) => n + 1)}>
            Reload page
          </button>
          <span>Page load {page}</span>
        </div>
      )}
      <Page
        key={page}
        scenario={scenario}
        isNew={scenario.isNew && !started}
        onStarted={onStarted}
        tools={tools}
      />
    </div>
  )
}

function Page({
  scenario,
  isNew,
  onStarted,
  tools,
}: {
  scenario: Scenario
  isNew: boolean
  onStarted: () => void
  /** Rendered inside the page's providers, beside the chat (e.g. the devtools panel). */
  tools?: ReactNode
}) {
  // A page's client: no credentials (the mock's user answers), push over SSE (served through the
  // service worker), no tab relay (each story is one tab; "another tab" is the backend's seeder).
  const [{ client, queryClient }] = useState(() => ({
    client: createPreviewChatClient({
      baseUrl: '/rest',
      push: ssePush(),
      relay: false,
      scope: scenario.user,
      // Close a page's sessions as soon as it unmounts, so that none of them reads from the next
      // story's backend (and, say, takes the failure that story armed for its own read).
      lingerMs: 0,
    }),
    queryClient: new QueryClient(),
  }))
  return (
    <QueryClientProvider client={queryClient}>
      <PreviewChatProvider client={client}>
        <div style={pageCell}>
          <ChatView
            user={scenario.user}
            threadId={scenario.threadId}
            isNew={isNew}
            onStarted={onStarted}
          />
        </div>
        {tools}
      </PreviewChatProvider>
    </QueryClientProvider>
  )
}
