import { MessageNotSentError } from '@assistant-ui/react'
import type { PreviewChatError, PreviewChatErrorCode, SubmitResult } from '@preview-chat/react'

/** Why a message was not sent: the refusal's code, or `busy` (the gate was shut, nothing was asked). */
export type NotSentCode = PreviewChatErrorCode | 'busy'

/**
 * A message the session did not send (`submit()` answered `busy` or `failed`), thrown from the
 * adapter's `onNew`. It is assistant-ui's `MessageNotSentError` — the kit recognises that by a
 * `Symbol.for` brand, which a subclass keeps, and hands the text back to the composer — with
 * nothing of the refusal lost: `code`, and the `PreviewChatError` itself as `cause` (its
 * `status`, `retryAfterMs`, `hint`…; `undefined` for `busy`, which has no error).
 */
export class PreviewChatNotSentError extends MessageNotSentError {
  readonly code: NotSentCode
  declare readonly cause: PreviewChatError | undefined

  constructor(result: Exclude<SubmitResult, { outcome: 'accepted' }>) {
    const error = result.outcome === 'failed' ? result.error : undefined
    super(error?.message ?? 'A turn is running; the message was not sent.')
    this.code = error?.code ?? 'busy'
    this.cause = error
  }
}
