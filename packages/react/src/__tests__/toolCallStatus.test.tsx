// An answered suspension, rendered as the README's renderer does: through `toolCallStatus`, the
// first turn's call is `answered` once the record has it, never `running`, and the resumed
// turn's message holds the same call resolved.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SessionState } from '@preview-chat/core'
import { toolCallStatus } from '../toolCallStatus'
import { setupChat, tabClient } from './harness'

const chat = setupChat({ deltaMs: 0, snapshotMs: 5 })

const callStatuses = (state: SessionState, toolCallId: string) =>
  state.messages.flatMap((message) =>
    message.content.flatMap((part) =>
      part.type === 'tool-call' && part.toolCallId === toolCallId
        ? [toolCallStatus(part, message)]
        : [],
    ),
  )

describe('toolCallStatus', () => {
  it('an answered suspension is answered in its finished message, resolved in the next, never running', async () => {
    const suspended = await chat.mock.seed.suspension()
    const session = tabClient().session(suspended.key)
    const seen: string[][] = []
    const unsubscribe = session.subscribe((state) =>
      seen.push(callStatuses(state, suspended.toolCallId)),
    )
    await expect.poll(() => session.getState().openSuspensions.length, { timeout: 10_000 }).toBe(1)
    expect(callStatuses(session.getState(), suspended.toolCallId)).toEqual(['waiting'])

    expect((await session.resume(suspended, { approved: true })).outcome).toBe('accepted')
    await expect
      .poll(() => callStatuses(session.getState(), suspended.toolCallId), { timeout: 10_000 })
      .toEqual(['answered', 'resolved'])
    // Every state on the way: the first turn's call never read as running.
    expect(seen.every((statuses) => statuses[0] !== 'running' && statuses[0] !== 'writing')).toBe(
      true,
    )
    // The record keeps neither state nor payload in the first message: what the helper reads.
    const part = session
      .getState()
      .messages.flatMap((m) => m.content)
      .find((p) => p.type === 'tool-call' && p.toolCallId === suspended.toolCallId)
    expect(part).toMatchObject({ type: 'tool-call' })
    expect(part && 'state' in part ? part.state : undefined).toBeUndefined()
    unsubscribe()
  })

  it("is what the README's renderer uses, instead of reading `state` alone", () => {
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8')
    expect(readme).toContain('}[toolCallStatus(part, message)]')
    expect(readme).not.toContain('`state` is absent while the call runs;')
  })
})
