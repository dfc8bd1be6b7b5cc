// The kit's status line in words (`statusProblem`), one row per state of the session it reads.
import { PreviewChatError } from '@preview-chat/react'
import { describe, expect, it } from 'vitest'
import { statusProblem } from '../PreviewChatStatus'

const failed = new PreviewChatError('server_error', 'The history read failed with HTTP 503.')
const refused = new PreviewChatError('turn_already_running', 'A turn is running already.')

describe('statusProblem', () => {
  it.each([
    {
      state: 'a thread not found (a new one)',
      chat: { notFound: true, readError: null, error: null },
      says: null,
    },
    {
      state: 'a read that failed',
      chat: { notFound: false, readError: failed, error: null },
      says: `Cannot read this thread (retrying): ${failed.message}`,
    },
    {
      state: 'a new thread whose later read failed',
      chat: { notFound: true, readError: failed, error: null },
      says: `Cannot read this thread (retrying): ${failed.message}`,
    },
    {
      state: 'an action that failed, first',
      chat: { notFound: false, readError: failed, error: refused },
      says: refused.message,
    },
    { state: 'all well', chat: { notFound: false, readError: null, error: null }, says: null },
  ])('$state [R-READ-404-NO-ERROR]', ({ chat, says }) => {
    expect(statusProblem(chat)).toBe(says)
  })
})
