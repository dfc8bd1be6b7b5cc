import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { TurnEvent } from '@preview-chat/core/contract'
import { describe, expect, it } from 'vitest'
import { maxCount, scriptedAgent } from '../agent'

/** Runs the scripted agent on `input` without pauses; returns the text it streamed, in deltas. */
async function deltasOf(input: Parameters<typeof scriptedAgent>[0]): Promise<string[]> {
  const deltas: string[] = []
  let ids = 0
  await scriptedAgent(input, {
    emit: (event: TurnEvent) => {
      if (event.type === 'text-delta') deltas.push(event.delta)
    },
    pause: async () => undefined,
    id: (prefix) => `${prefix}-${++ids}`,
    now: () => 0,
    signal: new AbortController().signal,
    history: [],
  })
  return deltas
}

/** The deltas of the scripted agent's answer to an ordinary message. */
const echo = (message: string) => deltasOf({ kind: 'message', message })

describe('the echo of an ordinary message quotes at most maxCount words [R-SERVER-ECHO-CAP]', () => {
  it('quotes a short message whole', async () => {
    expect((await echo('hello there')).join('')).toBe('You said (2 words): "hello there"')
  })

  it('quotes the first maxCount words of a message of 1 MiB, then says it cut the rest', async () => {
    const message = 'a '.repeat(512 * 1024)
    const deltas = await echo(message)
    // The quote's words, and the few of "You said (N words):" and of the ellipsis's note.
    expect(deltas.length).toBeLessThan(maxCount + 10)
    const text = deltas.join('')
    expect(text.startsWith(`You said (${512 * 1024} words): "a a `)).toBe(true)
    expect(text.endsWith(`a … (the first ${maxCount} words)"`)).toBe(true)
    expect(text.match(/\ba\b/g)).toHaveLength(maxCount)
  })
})

describe('the scripted agent makes its deltas as it streams them [R-SERVER-TURN-SLOW]', () => {
  it('holds nothing of the deltas not streamed yet: 20 turns of /long 100000 at their first pause', async () => {
    // Issue 27, row k: under 20 unread `/long 100000` turns the agent held 20 lists of 100,000
    // deltas made up front (some 7 MB a turn) before streaming the first. A full collection
    // (exposed for this test) then a heap reading: a count of bytes, not a clock.
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const held: Promise<unknown>[] = []
    const never = new Promise<void>(() => undefined)
    gc()
    const before = process.memoryUsage().heapUsed
    for (let turn = 0; turn < 20; turn++) {
      held.push(
        scriptedAgent(
          { kind: 'message', message: `/long ${maxCount}` },
          {
            emit: () => undefined,
            pause: () => never,
            id: (prefix) => prefix,
            now: () => 0,
            signal: new AbortController().signal,
            history: [],
          },
        ),
      )
    }
    gc()
    const grown = process.memoryUsage().heapUsed - before
    expect(held).toHaveLength(20)
    expect(grown).toBeLessThan(10 * 1024 * 1024)
  })
})

/** The deltas of the scripted agent's answer to a resume of its `/suspend` with `resumeData`. */
const resumed = (resumeData: unknown) =>
  deltasOf({
    kind: 'resume',
    payload: { runId: 'run-1', toolCallId: 'call-1', toolName: 'request_approval', input: {} },
    resumeData,
  })

describe('the scripted agent resumed with { approved: true, long: N } answers N deltas more [R-TURN-SURVIVES-RESUME]', () => {
  it('streams the approval, then N numbered deltas, as /long N does', async () => {
    expect((await resumed({ approved: true })).join('')).toBe('Approved: the email was sent.')
    const long = await resumed({ approved: true, long: 3 })
    expect(long.join('')).toBe('Approved: the email was sent.delta 1. delta 2. delta 3. ')
  })

  it('adds nothing to a decline, or for a long that is not a whole number above 0', async () => {
    const declined = 'Understood: I did not send the email.'
    expect((await resumed({ approved: false, long: 3 })).join('')).toBe(declined)
    for (const long of ['3', 2.5, 0, -1, null])
      expect((await resumed({ approved: true, long })).join('')).toBe(
        'Approved: the email was sent.',
      )
  })
})
