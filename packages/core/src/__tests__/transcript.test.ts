/**
 * composeTranscript (issue 15): it runs for every network chunk of a stream, and now looks the live
 * turn's messages up in an index kept per recorded transcript instead of filtering the transcript.
 * For any recorded transcript (duplicated ids too) and any live turns, it gives what the
 * filtering version gave (kept here as the reference), and never changes its input.
 */
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { assertSeeded } from './seeded'
import type { Message } from '../contract'
import { composeTranscript } from '../engine/transcript'
import { startTurn, turnMessages, type LiveTurn } from '../engine/fold'

// Property runs are a step budget (their numRuns), never a time limit: this timeout is only a
// backstop, sized for a loaded 2-core machine (issue 27, row h).
vi.setConfig({ testTimeout: 120_000 })

function reference(recorded: readonly Message[], live: readonly (LiveTurn | null)[]): Message[] {
  let messages = recorded as Message[]
  for (const turn of live) {
    if (!turn) continue
    const overlay = turnMessages(turn)
    const ids = new Set(overlay.map((message) => message.id))
    const kept = messages.filter((message) => !ids.has(message.id))
    if (kept.length === messages.length) messages = [...messages, ...overlay]
    else {
      const at = messages.findIndex((message) => ids.has(message.id))
      messages = [...kept.slice(0, at), ...overlay, ...kept.slice(at)]
    }
  }
  return messages
}

const executionId = fc.constantFrom('e1', 'e2', 'e3', 'e4')
const recordedMessage = fc
  .tuple(executionId, fc.constantFrom('user', 'assistant') as fc.Arbitrary<'user' | 'assistant'>)
  .map(([id, role]): Message => ({
    id: `${id}:${role}`,
    role,
    executionId: id,
    executionStatus: 'success',
    createdAt: 'x',
    content: [{ type: 'text', text: `recorded ${id}` }],
  }))
const liveTurn = fc.option(
  fc.tuple(executionId, fc.boolean()).map(([id, resumed]) =>
    startTurn({
      executionId: id,
      sessionId: 's',
      createdAt: 'y',
      ...(!resumed && { message: `live ${id}` }),
    }),
  ),
)

describe('composeTranscript [R-READ-NEVER-SHRINKS]', () => {
  it('puts live turns where the filtering version did', () => {
    assertSeeded(
      'transcript',
      fc.property(
        fc.array(recordedMessage, { maxLength: 10 }),
        fc.array(liveTurn, { maxLength: 3 }),
        (recorded, live) => {
          const frozen = Object.freeze([...recorded])
          expect(composeTranscript(frozen, live)).toEqual(reference(frozen, live))
          // The same transcript again (its index is kept): the same answer.
          expect(composeTranscript(frozen, live)).toEqual(reference(frozen, live))
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('returns the recorded list itself when no turn is live', () => {
    const recorded: Message[] = []
    expect(composeTranscript(recorded, null)).toBe(recorded)
  })
})
