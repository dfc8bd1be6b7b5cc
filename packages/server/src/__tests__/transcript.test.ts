import { describe, expect, it } from 'vitest'
import { createTranscript } from '../transcript'

const child = (chunk: Parameters<typeof chunkEvent>[0]) => chunkEvent(chunk)
function chunkEvent(
  chunk: { type: 'text-delta'; delta: string } | { type: 'reasoning-delta'; delta: string },
) {
  return { type: 'subagent-chunk' as const, parentToolCallId: 'd1', taskPath: 'delegate', chunk }
}

describe('transcript', () => {
  it('folds one text stream into one part without its live id, in the order streams started', () => {
    const transcript = createTranscript({ delegationCharLimit: 4000, now: () => 1 })
    transcript.apply({ type: 'text-start', id: 'x' })
    transcript.apply({ type: 'reasoning-start', id: 'r' })
    transcript.apply({ type: 'text-delta', id: 'x', delta: 'Hel' })
    transcript.apply({ type: 'reasoning-delta', id: 'r', delta: 'hmm' })
    transcript.apply({ type: 'text-delta', id: 'x', delta: 'lo' })
    expect(transcript.parts()).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'reasoning', text: 'hmm', startTime: 1 },
    ])
  })

  it('records a delegation up to the shared limit exactly, cutting the delta that crosses it', () => {
    const transcript = createTranscript({ delegationCharLimit: 10, now: () => 1 })
    transcript.apply(child({ type: 'reasoning-delta', delta: 'rrrrrr' }))
    transcript.apply(child({ type: 'text-delta', delta: 'tttttt' }))
    transcript.apply(child({ type: 'text-delta', delta: 'more' }))
    const [part] = transcript.parts()
    expect(part).toMatchObject({
      type: 'tool-call',
      toolCallId: 'd1',
      childTrace: {
        text: 'tttt',
        reasoningSegments: [{ id: 'segment-1', content: 'rrrrrr', startTime: 1 }],
        steps: [],
      },
    })
  })

  it('marks itself dirty on a change and clean once recorded', () => {
    const transcript = createTranscript({ delegationCharLimit: 10, now: () => 1 })
    expect(transcript.dirty).toBe(false)
    transcript.apply({ type: 'start-step' })
    expect(transcript.dirty).toBe(false)
    transcript.apply({ type: 'text-delta', id: 'x', delta: 'a' })
    expect(transcript.dirty).toBe(true)
    transcript.markRecorded()
    expect(transcript.dirty).toBe(false)
  })
})
