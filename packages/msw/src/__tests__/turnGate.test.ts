import { describe, expect, it } from 'vitest'
import { setupPreviewChatServer } from '../vitest'
import { createClient, follow, newThread, textOf } from './harness'

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })

describe('holdTurns [R-MSW-HOLD]', () => {
  it('advances a turn one step per release, like a controlled stream', async () => {
    const turn = chat.mock.holdTurns()
    const session = createClient().session({ ...newThread(), isNew: true })
    const t = follow(session)
    session.setDraft('/long 3')
    await session.submit()
    await turn.waitForPause()
    const texts = [textOf(session.getState().messages[1])]
    for (const expected of ['delta 1. ', 'delta 1. delta 2. ']) {
      await turn.step()
      const state = await t.until((s) => textOf(s.messages[1]) === expected, expected)
      expect(state.status).toBe('streaming')
      expect(turn.pending).toBe(1)
      texts.push(textOf(state.messages[1]))
    }
    // The last step streams the last delta and the end of the turn (no pause follows it).
    await turn.step()
    texts.push(textOf((await t.until((s) => s.status === 'idle', 'the end')).messages[1]))
    expect(texts).toEqual(['', 'delta 1. ', 'delta 1. delta 2. ', 'delta 1. delta 2. delta 3. '])
    expect(turn.pending).toBe(0)
    // A turn that ends with `done` shows running until the record says how it ended.
    const done = await t.until(
      (s) => s.status === 'idle' && s.messages[1]?.executionStatus !== 'running',
      'the record of the turn',
    )
    expect(done.messages[1]?.executionStatus).toBe('success')
    t.unsubscribe()
  })

  it('a Stop ends a held turn at once (the held pause rejects like a timer would) [R-SERVER-STOP-RECORD]', async () => {
    const turn = chat.mock.holdTurns()
    const session = createClient().session({ ...newThread(), isNew: true })
    const t = follow(session)
    session.setDraft('Hello')
    await session.submit()
    await turn.waitForPause()
    expect(await session.stop()).toEqual({ cancelRequested: true })
    const stopped = await t.until(
      (s) => s.status === 'idle' && s.messages[1]?.executionStatus === 'cancelled',
      'the cancelled record',
    )
    expect(stopped.activeExecutionId).toBeNull()
    expect(turn.pending).toBe(0)
    expect(t.statuses()).toEqual(['idle', 'submitting', 'streaming', 'stopping', 'idle'])
    t.unsubscribe()
  })

  it('release() lets held turns run to their end', async () => {
    const turn = chat.mock.holdTurns()
    const session = createClient().session({ ...newThread(), isNew: true })
    const t = follow(session)
    session.setDraft('/long 4')
    await session.submit()
    await turn.waitForPause()
    turn.release()
    expect(turn.holding).toBe(false)
    const done = await t.until((s) => s.status === 'idle', 'the end of the turn')
    expect(textOf(done.messages[1])).toBe('delta 1. delta 2. delta 3. delta 4. ')
    t.unsubscribe()
  })
})
