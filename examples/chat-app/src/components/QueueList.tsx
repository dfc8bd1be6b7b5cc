import type { QueuedMessage } from '@preview-chat/react/queue'
import { useState, type KeyboardEvent } from 'react'

export interface QueueListProps {
  /** The thread's queue, in the order it is sent (every tab of the user shows the same one). */
  items: readonly QueuedMessage[]
  /** A Stop (or a failed turn) held what was queued then (`held`): it waits for `onResume`. */
  paused: boolean
  onEdit: (id: string, text: string) => void
  onRemove: (id: string) => void
  onSendNow: (id: string) => void
  onResume: () => void
}

const labels: Record<QueuedMessage['status'], string> = {
  queued: 'Queued',
  sending: 'Sending…',
  undelivered: 'Not delivered',
  steering: 'Joining the running turn…',
}

/**
 * The messages waiting for the thread, under the transcript and never in it: a queued message is
 * not a chat bubble until its turn begins. Each can be edited in place, removed or sent next; one
 * being sent can be neither edited nor removed.
 */
export function QueueList({
  items,
  paused,
  onEdit,
  onRemove,
  onSendNow,
  onResume,
}: QueueListProps) {
  if (items.length === 0) return null
  return (
    <section
      className="queue"
      aria-labelledby="queue-title"
      data-testid="queue"
      data-paused={paused}
    >
      <div className="queue-header">
        <h2 id="queue-title" className="queue-title">
          Queued messages
        </h2>
        {paused && (
          <>
            <span className="queue-paused">Paused: held until you resume</span>
            <button type="button" className="primary" onClick={onResume}>
              Send queued ({items.filter((item) => item.held).length})
            </button>
          </>
        )}
      </div>
      <ol className="queue-list" aria-labelledby="queue-title">
        {items.map((item) => (
          <QueuedItem
            key={item.id}
            item={item}
            onEdit={onEdit}
            onRemove={onRemove}
            onSendNow={onSendNow}
          />
        ))}
      </ol>
    </section>
  )
}

function QueuedItem({
  item,
  onEdit,
  onRemove,
  onSendNow,
}: { item: QueuedMessage } & Pick<QueueListProps, 'onEdit' | 'onRemove' | 'onSendNow'>) {
  const [editing, setEditing] = useState<string | null>(null)
  // Being sent, or being added to the running turn: it can no longer change.
  const sending = item.status === 'sending' || item.status === 'steering'
  const textId = `queued-${item.id}`
  const save = () => {
    if (editing !== null && editing.trim() !== '') onEdit(item.id, editing)
    setEditing(null)
  }
  // Each names the message it acts on (`aria-describedby`); none while it is being sent.
  const actions: [string, () => void][] = [
    ['Edit', () => setEditing(item.text)],
    ['Remove', () => onRemove(item.id)],
    ['Send now', () => onSendNow(item.id)],
  ]
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      save()
    } else if (event.key === 'Escape') setEditing(null)
  }
  return (
    <li
      className={`queued queued-${item.status}`}
      data-testid="queued-message"
      data-status={item.status}
    >
      {editing === null || sending ? (
        <p id={textId} className="queued-text" data-testid="queued-text">
          {item.text}
        </p>
      ) : (
        <textarea
          className="queued-edit"
          aria-label="Edit queued message"
          rows={2}
          value={editing}
          autoFocus // the person just pressed Edit
          onChange={(event) => setEditing(event.target.value)}
          onKeyDown={onKeyDown}
        />
      )}
      <span className="queued-status">{labels[item.status]}</span>
      {item.error && (
        <p className="queued-error" role="alert">
          {item.error.message}
        </p>
      )}
      <div className="queued-actions">
        {editing === null || sending ? (
          actions.map(([label, act]) => (
            <button
              key={label}
              type="button"
              aria-describedby={textId}
              disabled={sending}
              onClick={act}
            >
              {label}
            </button>
          ))
        ) : (
          <>
            <button type="button" className="primary" onClick={save}>
              Save
            </button>
            <button type="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </>
        )}
      </div>
    </li>
  )
}
