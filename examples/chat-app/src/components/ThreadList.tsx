export interface ThreadSummary {
  id: string
  title: string
}

export interface ThreadListProps {
  threads: readonly ThreadSummary[]
  activeId: string | null
  onSelect: (id: string) => void
  onNew: () => void
}

/** The threads of this browser's user, newest first; each is a link (`?thread=id`). */
export function ThreadList({ threads, activeId, onSelect, onNew }: ThreadListProps) {
  return (
    <nav className="thread-list" aria-label="Threads">
      <button type="button" className="primary new-thread" onClick={onNew}>
        New thread
      </button>
      <ul>
        {threads.map((thread) => (
          <li key={thread.id}>
            <a
              href={`?thread=${encodeURIComponent(thread.id)}`}
              aria-current={thread.id === activeId ? 'page' : undefined}
              onClick={(event) => {
                event.preventDefault()
                onSelect(thread.id)
              }}
            >
              {thread.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  )
}
