// A send the session refuses reaches assistant-ui as its not-sent error (the composer gets the
// text back) with the refusal whole: its code, and the PreviewChatError as `cause`.
import { isMessageNotSentError, type AppendMessage } from '@assistant-ui/react'
import { PreviewChatError, type PreviewChat, type SubmitResult } from '@preview-chat/react'
import { describe, expect, it } from 'vitest'
import { PreviewChatNotSentError } from '../notSentError'
import { adapterActions } from '../usePreviewChatRuntime'

/** The adapter's `onNew` over a chat whose `submit` answers `result`; what it threw. */
async function sendRefused(result: SubmitResult): Promise<unknown> {
  const chat = { submit: () => Promise.resolve(result) } as unknown as PreviewChat
  const message = { content: [{ type: 'text', text: 'Hello' }] } as unknown as AppendMessage
  return adapterActions(() => chat)
    .onNew(message)
    .then(
      () => null,
      (error: unknown) => error,
    )
}

describe('a refused send [R-KIT-REFUSAL-TYPED]', () => {
  it('throws the kit’s not-sent error carrying the PreviewChatError as cause, and its code', async () => {
    const refusal = new PreviewChatError('server_error', 'The server is overloaded; try again.', {
      status: 503,
      retryAfterMs: 2_000,
      hint: 'Wait a little',
    })
    const thrown = await sendRefused({ outcome: 'failed', error: refusal })
    expect(isMessageNotSentError(thrown)).toBe(true)
    expect(thrown).toBeInstanceOf(PreviewChatNotSentError)
    const error = thrown as PreviewChatNotSentError
    expect(error.code).toBe('server_error')
    expect(error.cause).toBe(refusal)
    expect(error.message).toBe('The server is overloaded; try again.')
    expect(PreviewChatError.isInstance(error.cause)).toBe(true)
    expect(error.cause).toMatchObject({ status: 503, retryAfterMs: 2_000, hint: 'Wait a little' })
  })

  it('busy (the gate was shut, nothing asked of the server) has the code busy and no cause', async () => {
    const thrown = await sendRefused({ outcome: 'busy' })
    expect(isMessageNotSentError(thrown)).toBe(true)
    expect(thrown).toMatchObject({ code: 'busy', cause: undefined })
  })

  it('an accepted message throws nothing', async () => {
    expect(await sendRefused({ outcome: 'accepted', executionId: 'e1' })).toBeNull()
  })
})
