/** Why `createPreviewChatBackend` refused its options. */
export type PreviewChatConfigErrorCode =
  /** Neither `authenticate` nor `dev: true`: a backend without auth is a development server. */
  | 'no_authenticate'
  /** No `agent` outside `dev: true` (the scripted demo agent is a development convenience). */
  | 'no_agent'

/** A backend's options that cannot run: thrown by `createPreviewChatBackend`, before any request. */
export class PreviewChatConfigError extends Error {
  readonly code: PreviewChatConfigErrorCode

  constructor(code: PreviewChatConfigErrorCode, message: string) {
    super(message)
    this.name = 'PreviewChatConfigError'
    this.code = code
  }

  /** Whether `error` is one, even from another copy of this package. */
  static isInstance(error: unknown): error is PreviewChatConfigError {
    return error instanceof Error && error.name === 'PreviewChatConfigError' && 'code' in error
  }
}
