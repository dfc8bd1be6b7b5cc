export type ErrorBannerKind = 'turn_already_running' | 'read_failed' | 'not_found' | 'error'

const titles: Record<ErrorBannerKind, string> = {
  turn_already_running: 'A turn is already running in this conversation',
  read_failed: 'Could not refresh the conversation',
  not_found: 'Conversation not found',
  error: 'Something went wrong',
}

export interface ErrorBannerProps {
  kind: ErrorBannerKind
  /** What happened and what to do, in a sentence. */
  message: string
  onRetry?: () => void
  onDismiss?: () => void
}

/** Says what happened; `role="alert"` announces it once. */
export function ErrorBanner({ kind, message, onRetry, onDismiss }: ErrorBannerProps) {
  return (
    <div className={`error-banner error-${kind}`} role="alert" data-testid={`error-${kind}`}>
      <div>
        <strong>{titles[kind]}</strong>
        <p>{message}</p>
      </div>
      <div className="error-actions">
        {onRetry && (
          <button type="button" onClick={onRetry}>
            Retry now
          </button>
        )}
        {onDismiss && (
          <button type="button" onClick={onDismiss} aria-label="Dismiss">
            ×
          </button>
        )}
      </div>
    </div>
  )
}
