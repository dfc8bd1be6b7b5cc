import type { FormEvent, KeyboardEvent } from 'react'

export interface ComposerProps {
  draft: string
  onDraftChange: (draft: string) => void
  /** Send the draft; called only when `canSubmit`. */
  onSubmit: () => void
  /**
   * The gate: nothing runs, the thread's state is known, and the draft has text (with a queue:
   * the draft has text).
   */
  canSubmit: boolean
  /** A turn runs. */
  isRunning: boolean
  /** What is sent while a turn runs waits in the queue (the client has `queue()`). */
  queues?: boolean
  /** Stop can be pressed here (on some servers only the tab that sent the message can). */
  canStop?: boolean
  onStop: () => void
  stopping?: boolean
  /** The whole composer is off (e.g. the thread was not found). */
  disabled?: boolean
}

/**
 * The draft stays editable while a turn runs; only Send waits (with a queue, the message does).
 * Enter sends, Shift+Enter starts a new line.
 */
export function Composer({
  draft,
  onDraftChange,
  onSubmit,
  canSubmit,
  isRunning,
  queues = false,
  canStop = isRunning,
  onStop,
  stopping = false,
  disabled = false,
}: ComposerProps) {
  const send = (event?: FormEvent) => {
    event?.preventDefault()
    if (canSubmit && !disabled) onSubmit()
  }
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      send()
    }
  }
  return (
    <form className="composer" onSubmit={send} aria-label="Composer">
      <label htmlFor="composer-draft" className="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-draft"
        name="message"
        rows={3}
        value={draft}
        disabled={disabled}
        placeholder="Type a message, or /long 200, /delegate 5000, /suspend, /fail"
        aria-describedby="composer-hint"
        onChange={(event) => onDraftChange(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="composer-actions">
        <span id="composer-hint" className="hint">
          {!isRunning
            ? 'Enter sends, Shift+Enter adds a line.'
            : queues
              ? 'A turn is running: what you send now waits in the queue.'
              : 'A turn is running: you can keep typing, and send once it ends.'}
        </span>
        {(canStop || stopping) && (
          <button type="button" className="danger" onClick={onStop} disabled={stopping}>
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        )}
        <button type="submit" className="primary" disabled={!canSubmit || disabled}>
          Send
        </button>
      </div>
    </form>
  )
}
