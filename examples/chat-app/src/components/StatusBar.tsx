export type ConnectionStatus =
  'idle' | 'submitting' | 'streaming' | 'recovering' | 'following' | 'stopping'

const labels: Record<ConnectionStatus, string> = {
  idle: 'Live',
  submitting: 'Sending…',
  streaming: 'Live: streaming',
  recovering: 'Recovering…',
  following: 'Following the running turn',
  stopping: 'Stopping…',
}

export interface StatusBarProps {
  status: ConnectionStatus
  /** When the recorded transcript was last read (ms since the epoch). */
  lastSyncedAt?: number | null
  user?: string
}

/** The session's status in words (a polite live region, so changes are announced). */
export function StatusBar({ status, lastSyncedAt, user }: StatusBarProps) {
  return (
    <div className="status-bar" role="status" data-testid="status" data-status={status}>
      <span className={`status-dot status-${status}`} aria-hidden="true" />
      <span className="status-label">{labels[status]}</span>
      {lastSyncedAt != null && (
        <span className="status-synced">synced {new Date(lastSyncedAt).toLocaleTimeString()}</span>
      )}
      {user && <span className="status-user">as {user}</span>}
    </div>
  )
}
