import { describe, expect, it } from 'vitest'
import { setupPreviewChatServer } from '../vitest'
import { createClient, follow, newThread, textOf } from './harness'

const chat = setupPreviewChatServer({ deltaMs: 1, snapshotMs: 5 })

describe('cutNextStream [R-MSW-CUT]', () => {
  it('cuts the client copy after N events; the turn goes on and the session recovers it without posting again [R-RECOVER-READ R-TURN-SURVIVES]', async () => {
    const client = createClient()
    const key = newThread()
    const session = client.session({ ...key, isNew: true })
    const t = follow(session)
    const turn = chat.mock.holdTurns()
    // /long: execution-started, start-step, text-start, then one text-delta per step.
    const cut = chat.mock.cutNextStream({ afterEvents: 4 })
    session.setDraft('/long 5')
    const posted = await session.submit()
    expect(posted.outcome).toBe('accepted')
    await turn.step()
    await cut

    // The read after the cut finds the turn still running on the server.
    const following = await t.until((s) => s.status === 'following', 'following the recorded turn')
    expect(following.activeExecutionId).toBe(
      posted.outcome === 'accepted' ? posted.executionId : null,
    )
    expect(chat.mock.backend.inspect.running()).toHaveLength(1)

    turn.release()
    const done = await t.until(
      (s) => s.status === 'idle' && s.messages[1]?.executionStatus === 'success',
      'the recorded end of the turn',
    )
    expect(t.statuses()).toEqual([
      'idle',
      'submitting',
      'streaming',
      'recovering',
      'following',
      'idle',
    ])
    // What streamed live before the cut was shown, then replaced by the record.
    expect(
      t.states.some((s) => s.status === 'streaming' && textOf(s.messages[1]) === 'delta 1. '),
    ).toBe(true)
    expect(textOf(done.messages[1])).toBe('delta 1. delta 2. delta 3. delta 4. delta 5. ')
    expect(chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(1)
    t.unsubscribe()
  })

  it("mode 'error' fails the read of the body; the session recovers the same way [R-RECOVER-CUT]", async () => {
    const client = createClient()
    const session = client.session({ ...newThread(), isNew: true })
    const t = follow(session)
    const cut = chat.mock.cutNextStream({ afterEvents: 1, mode: 'error' })
    session.setDraft('Hello there')
    await session.submit()
    await cut
    const done = await t.until(
      (s) => s.status === 'idle' && s.messages[1]?.executionStatus === 'success',
      'the recorded end of the turn',
    )
    expect(textOf(done.messages[1])).toBe('You said (2 words): "Hello there"')
    // An errored stream drops what it had not handed over: the client saw no event, so it sent the
    // message once more with the same messageId; the reference server dedupes (a bare `done`), and
    // the message is in the record once [R-POST-RETRY-DEDUPE].
    expect(chat.mock.backend.inspect.countRequests({ route: 'chat', method: 'POST' })).toBe(2)
    expect(done.messages.filter((m) => m.role === 'user')).toHaveLength(1)
    t.unsubscribe()
  })

  it('cuts only the next stream: the one after it streams to its end', async () => {
    const client = createClient()
    const session = client.session({ ...newThread(), isNew: true })
    const t = follow(session)
    void chat.mock.cutNextStream({ afterEvents: 2 })
    session.setDraft('one')
    await session.submit()
    await t.until((s) => s.status === 'idle' && s.messages.length === 2, 'the first turn')
    const before = t.states.length
    session.setDraft('two')
    await session.submit()
    await t.until((s) => s.status === 'idle' && s.messages.length === 4, 'the second turn')
    expect(t.states.slice(before).some((s) => s.status === 'recovering')).toBe(false)
    t.unsubscribe()
  })
})
