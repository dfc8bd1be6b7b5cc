import type { MessagePart } from '@preview-chat/core'
import { describe, expect, it } from 'vitest'
import { setupPreviewChatServer } from '../vitest'
import { createClient, follow, textOf } from './harness'

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })

describe('seed.runningTurn [R-MSW-SEED]', () => {
  it('gives a thread with a running turn that the client follows, blocks submission, and ends on release [R-RECOVER-FOLLOW-RECORDED R-GATE-RUNNING]', async () => {
    const seeded = await chat.mock.seed.runningTurn({ message: 'Hi there' })
    expect(chat.mock.backend.inspect.history(seeded.key.threadId)?.activeExecutionId).toBe(
      seeded.executionId,
    )
    const session = createClient().session(seeded.key)
    const t = follow(session)
    const following = await t.until((s) => s.status === 'following', 'following')
    expect(following.activeExecutionId).toBe(seeded.executionId)
    session.setDraft('Another question')
    expect(session.getState().canSubmit).toBe(false)
    expect(await session.submit()).toEqual({ outcome: 'busy' })

    seeded.turn.release()
    const done = await t.until(
      (s) => s.status === 'idle' && s.messages[1]?.executionStatus === 'success',
      'the recorded end (announced over the SSE push)',
    )
    expect(textOf(done.messages[1])).toBe('You said (2 words): "Hi there"')
    expect(done.draft).toBe('Another question')
    expect(chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(1)
    t.unsubscribe()
  })

  it('with steps, the record already shows the output of those steps [R-READ-LATEST]', async () => {
    const seeded = await chat.mock.seed.runningTurn({ message: '/long 5', steps: 2 })
    const recorded = chat.mock.backend.inspect.history(seeded.key.threadId)
    expect(recorded?.activeExecutionId).toBe(seeded.executionId)
    expect(textOf(recorded?.messages[1])).toBe('delta 1. delta 2. ')
    await seeded.turn.step()
    seeded.turn.release()
  })

  it('holds only its own turn: other turns run freely', async () => {
    const held = await chat.mock.seed.runningTurn()
    const other = await chat.mock.seed.thread({ messages: ['one', 'two'] })
    expect(chat.mock.backend.inspect.history(other.key.threadId)?.messages).toHaveLength(4)
    expect(chat.mock.backend.inspect.running()).toEqual([held.executionId])
    held.turn.release()
  })
})

describe('seed.suspension [R-MSW-SEED R-RECOVER-SUSPENDED]', () => {
  it('gives a thread with an open suspension that the client can resume', async () => {
    const seeded = await chat.mock.seed.suspension()
    const session = createClient().session(seeded.key)
    const t = follow(session)
    const loaded = await t.until((s) => s.status === 'idle', 'the first read')
    expect(loaded.openSuspensions).toEqual([
      expect.objectContaining({ runId: seeded.runId, toolCallId: seeded.toolCallId }),
    ])
    const resumed = await session.resume(seeded, { approved: true })
    expect(resumed.outcome).toBe('accepted')
    const done = await t.until(
      (s) => s.status === 'idle' && s.messages.length === 3 && s.openSuspensions.length === 0,
      'the resumed turn recorded',
    )
    expect(textOf(done.messages[2])).toBe('Approved: the email was sent.')
    t.unsubscribe()
  })
})

describe('seed.truncatedDelegation [R-MSW-SEED R-DELEGATION-TRUNCATED]', () => {
  it('gives a delegation whose recorded child trace stops at the 4,000-character budget', async () => {
    const seeded = await chat.mock.seed.truncatedDelegation({ chars: 5000 })
    const session = createClient().session(seeded.key)
    const t = follow(session)
    const loaded = await t.until((s) => s.status === 'idle', 'the first read')
    const delegation = loaded.messages[1]?.content.find(
      (part): part is Extract<MessagePart, { type: 'tool-call' }> =>
        part.type === 'tool-call' && part.toolName === 'delegate',
    )
    const trace = delegation?.childTrace
    const chars =
      (trace?.text.length ?? 0) +
      (trace?.reasoningSegments ?? []).reduce((sum, segment) => sum + segment.content.length, 0)
    expect(chars).toBe(4000)
    expect(trace).toMatchObject({ truncated: true })
    t.unsubscribe()
  })
})

describe('seeding two users [R-MSW-SEED R-SERVER-IDS-PER-USER]', () => {
  it('gives bob a thread under an id alice already has (thread ids are per user)', async () => {
    const threadId = crypto.randomUUID()
    await chat.mock.seed.thread({ user: 'alice', threadId, messages: ['Hello from alice'] })
    const { key } = await chat.mock.seed.thread({
      user: 'bob',
      threadId,
      messages: ['Hello from bob'],
    })
    expect(key.threadId).toBe(threadId)
    const bobs = chat.mock.backend.inspect.threads().filter((thread) => thread.id === threadId)
    expect(bobs.map((thread) => thread.ownerId).sort()).toEqual(['alice', 'bob'])
  })
})
