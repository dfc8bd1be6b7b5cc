// A tool UI's answer to a suspension: sent once, and what cannot be sent rejects with the typed
// error (`PreviewChatNotSentError`, its `code`) instead of returning as if it had been handled.
import { screen, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { PreviewChatNotSentError } from '../notSentError'
import { readExtras } from '../extras'
import { mountChat, setupChat } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })
const resumes = () => chat.mock.backend.inspect.countRequests({ route: 'resume', method: 'POST' })

async function suspended() {
  const seeded = await chat.mock.seed.suspension()
  const { runtime } = mountChat(seeded.key)
  await screen.findByTestId('tool-request_approval', {}, { timeout: 10_000 })
  const answer = (toolCallId: string, data: unknown) =>
    readExtras(runtime().thread.getState().extras)!.answer(toolCallId, data)
  return { ...seeded, answer }
}

describe('answer()', () => {
  it('for a tool call no open suspension holds rejects as invalid_request, sending nothing', async () => {
    const { answer } = await suspended()
    const refused = await answer('no-such-call', { approved: true }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(PreviewChatNotSentError)
    expect((refused as PreviewChatNotSentError).code).toBe('invalid_request')
    expect((refused as PreviewChatNotSentError).message).toContain('no-such-call')
    expect(resumes()).toBe(0)
  })

  it('a second answer while the first is on its way rejects as busy; one resume is sent', async () => {
    const { answer, toolCallId } = await suspended()
    const first = answer(toolCallId, { approved: true })
    const second = answer(toolCallId, { approved: false }).catch((e: unknown) => e)
    await expect(first).resolves.toBeUndefined()
    const refused = await second
    expect(refused).toBeInstanceOf(PreviewChatNotSentError)
    expect((refused as PreviewChatNotSentError).code).toBe('busy')
    await waitFor(() => expect(screen.queryByText('Approve')).toBeNull(), { timeout: 10_000 })
    expect(resumes()).toBe(1)
    // Answered: the same call is no open suspension any more.
    const again = await answer(toolCallId, { approved: true }).catch((e: unknown) => e)
    expect((again as PreviewChatNotSentError).code).toBe('invalid_request')
    expect(resumes()).toBe(1)
  })
})
