/**
 * Steps that can be kept (issue 27): every action, state and command of the engine is plain JSON
 * — its errors are `ErrorRecord`s, not class instances; "at once" is a number, not `-Infinity` — so
 * a run recorded from a real session (`recordTrace(session)`, what the devtools export), written
 * as JSON and read back, replays through `reduce` step for step. The traces kept in `traces/` (a
 * bug the model suite found, as the fixed engine runs it) replay the same way.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
// A relative import keeps the workspace free of a core ⇄ server dependency cycle (test-only).
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import { parseTrace, replayTrace, TraceError, type EngineTrace } from '../engine/trace'
import { recordTrace } from '../effects/recordTrace'
import { reducerWith } from '../engine/reduce'
import { releasedPart } from '../engine/slices/released'
import { createPreviewChatClient, PreviewChatError, type PreviewChatSession } from '../index'

let backend: PreviewChatBackend
afterEach(() => backend.close())

/** Alice's tab on the reference server (spec flavor), with `user` as who the requests say. */
function session(threadId: string, user = 'alice'): PreviewChatSession {
  backend = createPreviewChatBackend({ dev: true, deltaMs: 0, snapshotMs: 5 })
  const client = createPreviewChatClient({
    headers: { Authorization: `Bearer ${user}` },
    fetch: (input, init) => backend.fetch(new Request(new URL(String(input), 'http://x'), init)),
    push: false,
    relay: false,
    storage: null,
    lingerMs: 0,
  })
  return client.session({ projectId: 'p', agentId: 'a', threadId, isNew: true })
}

const throughJson = (trace: EngineTrace) => parseTrace(JSON.parse(JSON.stringify(trace)))

/** The reducer of `session()`'s client: its parts, the released platform's and no relay's. */
const itsReducer = reducerWith([releasedPart])

const keptTraces = () => {
  const dir = join(import.meta.dirname, 'traces')
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({ name, json: JSON.parse(readFileSync(join(dir, name), 'utf8')) as unknown }))
}

describe('a run of the engine is data that replays [R-ENGINE-TRACE]', () => {
  it('a session’s turn and a refused one, recorded, written as JSON and read back, replay step for step', async () => {
    const chat = session(crypto.randomUUID())
    const recording = recordTrace(chat)
    const stop = chat.subscribe(() => {})
    expect(await chat.submit('hello')).toMatchObject({ outcome: 'accepted' })
    await until(() => chat.getState().status === 'idle' && chat.getState().messages.length === 2)
    // A blank message is refused by the engine itself.
    expect(await chat.submit('   ')).toMatchObject({
      outcome: 'failed',
      error: { code: 'invalid_request' },
    })
    await chat.refresh() // a read, through the query cache, in the trace too
    stop()
    recording.stop()

    const trace = recording.trace()
    const types = trace.steps.map((step) => step.action.type)
    expect(types).toEqual(expect.arrayContaining(['activated', 'submit-requested', 'turn-events']))
    expect(types).toContain('snapshot')
    expect(replayTrace(throughJson(trace), itsReducer)).toBeNull()
  })

  it('an error the server answers is a record in the engine and the trace, one PreviewChatError for the app', async () => {
    const chat = session(crypto.randomUUID(), 'mallory')
    const recording = recordTrace(chat)
    const stop = chat.subscribe(() => {})
    const result = await chat.submit('hello')
    stop()
    recording.stop()
    expect(result).toMatchObject({ outcome: 'failed', error: { code: 'unauthorized' } })
    // A record in the engine's state; for the app, one PreviewChatError, the same each time.
    expect(Object.getPrototypeOf(chat.getEngineState().error)).toBe(Object.prototype)
    expect(chat.getState().error).toBeInstanceOf(PreviewChatError)
    expect(chat.getState().error).toBe(result.outcome === 'failed' && result.error)
    const failed = recording.trace().steps.find((step) => step.action.type === 'post-failed')
    expect(failed?.action).toMatchObject({ error: { code: 'unauthorized', status: 401 } })
    expect(replayTrace(throughJson(recording.trace()), itsReducer)).toBeNull()
  })

  for (const { name, json } of keptTraces()) {
    it(`the kept trace ${name} replays as kept`, () => {
      expect(replayTrace(parseTrace(json))).toBeNull()
    })
  }

  it('says at which step and where a replay decides otherwise than the trace', () => {
    const [kept] = keptTraces()
    const trace = parseTrace(structuredClone(kept!.json))
    const index = trace.steps.findIndex((step) =>
      step.commands.some((command) => command.type === 'set-alarm'),
    )
    const command = trace.steps[index]!.commands.findIndex((c) => c.type === 'set-alarm')
    ;(trace.steps[index]!.commands[command] as { at: number | null }).at = 123
    expect(replayTrace(trace)).toMatchObject({
      step: index,
      path: `commands.${command}.at`,
      expected: 123,
    })
  })

  it('refuses a trace of another version, or of another shape, saying what is wrong', () => {
    expect(() => parseTrace({ version: 1 })).toThrow(/version 1; this engine replays version 2/)
    expect(() => parseTrace(null)).toThrow(/JSON object/)
    const kept = keptTraces()[0]!.json as EngineTrace
    expect(() => parseTrace({ ...kept, steps: [{ action: {} }] })).toThrow(/Step 0/)
  })
})

describe('parseTrace refuses what the reducer cannot take (issue 35, row i) [R-ENGINE-TRACE]', () => {
  /** A kept trace, copied, with `edit` applied. */
  const edited = (edit: (trace: EngineTrace) => void) => {
    const trace = structuredClone(keptTraces()[0]!.json) as EngineTrace
    edit(trace)
    return trace
  }
  /** What `parseTrace` threw, as data (a trace it took is a test failure). */
  const refusal = (json: unknown) => {
    try {
      parseTrace(json)
    } catch (error) {
      expect(error).toBeInstanceOf(TraceError)
      const { message, step, actionType, issues } = error as TraceError
      return { message, step, actionType, issues }
    }
    throw new Error('parseTrace took a trace the reducer cannot take')
  }

  it.each([
    {
      what: 'an action type this engine lacks (a newer build’s)',
      edit: (trace: EngineTrace) => {
        ;(trace.steps[2]!.action as { type: string }).type = 'queue-merged'
      },
      step: 2,
      actionType: 'queue-merged',
      says: /^Step 2's action is of type "queue-merged", which this engine does not take .*It takes: mounted, activated, /,
      issues: [],
    },
    {
      what: 'a truncated action (a tick without its time)',
      edit: (trace: EngineTrace) => {
        delete (trace.steps[2]!.action as { at?: number }).at
      },
      step: 2,
      actionType: 'tick',
      says: /^Step 2's action "tick" lacks what the reducer reads: steps\.2\.action\.at: missing\.$/,
      issues: ['steps.2.action.at: missing'],
    },
    {
      what: 'an action whose field has the wrong kind',
      edit: (trace: EngineTrace) => {
        ;(trace.steps[0]!.action as { random: unknown }).random = '0.5'
      },
      step: 0,
      actionType: 'mounted',
      says: /steps\.0\.action\.random: expected a number, got string/,
      issues: ['steps.0.action.random: expected a number, got string'],
    },
    {
      what: 'an empty initial state',
      edit: (trace: EngineTrace) => {
        trace.initial = {} as EngineTrace['initial']
      },
      step: null,
      actionType: null,
      says: /^The trace's `initial` is not the engine's state .*: initial\.key: missing; initial\.tab: missing; initial\.active: missing; initial\.disposed: missing; and \d+ more\.$/,
      issues: expect.arrayContaining(['initial.reads: missing', 'initial.draft: missing']),
    },
    {
      what: 'an initial state whose reads lack a field',
      edit: (trace: EngineTrace) => {
        delete (trace.initial.reads as Partial<EngineTrace['initial']['reads']>).count
      },
      step: null,
      actionType: null,
      says: /initial\.reads\.count: missing\.$/,
      issues: ['initial.reads.count: missing'],
    },
    {
      what: 'an empty config',
      edit: (trace: EngineTrace) => {
        trace.config = {} as EngineTrace['config']
      },
      step: null,
      actionType: null,
      says: /^The trace's `config` is not the engine's config .*config\.delegationCharLimit: missing/,
      issues: expect.arrayContaining(['config.retry: missing']),
    },
  ])('$what: refused, saying which step, type and field', ({ edit, says, what: _, ...where }) => {
    const trace = edited(edit)
    const { message, ...refused } = refusal(JSON.parse(JSON.stringify(trace)))
    expect(message).toMatch(says)
    expect(refused).toEqual(where)
  })

  // Each of these passed a check one level deep and made `replayTrace` throw a raw TypeError.
  it.each([
    [
      'a snapshot action whose snapshot is {}',
      'snapshot',
      { snapshot: {} },
      /snapshot\.messages: missing/,
    ],
    ['mounted with cached {}', 'mounted', { cached: {} }, /cached\.kind/],
    [
      'a push-message whose message is {}',
      'push-message',
      { message: {} },
      /message\.type: missing/,
    ],
    [
      'turn events that are not events',
      'turn-events',
      { events: [{}] },
      /events\.0: not a turn event/,
    ],
    ['a stream ended how no stream ends', 'stream-ended', { end: { kind: 'gone' } }, /end\.kind/],
  ] as const)(
    '%s: refused with every level checked [R-ENGINE-TRACE-DEEP]',
    (_, type, fields, says) => {
      const trace = edited((t) => {
        const action = {
          type,
          token: 1,
          at: 1,
          stampedAt: 1,
          random: 0,
          fresh: true,
          fromRead: true,
        }
        t.steps.splice(1, 0, { ...t.steps[1]!, action: { ...action, ...fields } as never })
      })
      const refused = refusal(JSON.parse(JSON.stringify(trace)))
      expect(refused).toMatchObject({ step: 1, actionType: type })
      expect(refused.message).toMatch(says)
    },
  )

  it.each([
    ['a queue that is {}', { queue: {} }, /initial\.queue\.stored: missing/],
    ['a queue change of no known op', { queue: 'pending' }, /initial\.queue\.pending\.0\.op/],
    ['a recorded snapshot without messages', { recorded: {} }, /initial\.recorded\.messages/],
    ['a live turn without its parts', { live: { executionId: 'e1' } }, /initial\.live\./],
    ['an own turn without its request', { own: { token: 1 } }, /initial\.own\./],
    ['a Stop of no known kind', { stop: { kind: 'later' } }, /initial\.stop\.kind/],
  ] as const)('an initial state with %s: refused [R-ENGINE-TRACE-DEEP]', (_, patch, says) => {
    const queue = {
      stored: { v: '1', items: [], paused: false, dedupes: null },
      view: { v: '1', items: [], paused: false, dedupes: null },
      pending: [{ op: 'merge', id: 'q1' }],
    }
    const trace = edited((t) => {
      Object.assign(t.initial, 'queue' in patch && patch.queue === 'pending' ? { queue } : patch)
    })
    const refused = refusal(JSON.parse(JSON.stringify(trace)))
    expect(refused.step).toBeNull()
    expect(refused.message).toMatch(says)
  })

  it('without the check, such a trace replays otherwise (the reducer takes no action it does not know); a kept one still replays', () => {
    const unknownType = edited((trace) => {
      ;(trace.steps[2]!.action as { type: string }).type = 'queue-merged'
    })
    // What `replayTrace` meets when nothing stops the trace before it: before issue 36 a bare
    // TypeError (a handler that is not one); now the step changes nothing, unlike the recorded one.
    expect(() => replayTrace(unknownType)).not.toThrow()
    expect(replayTrace(unknownType)).not.toBeNull()
    for (const { json } of keptTraces()) expect(replayTrace(parseTrace(json))).toBeNull()
  })
})

async function until(done: () => boolean) {
  for (let i = 0; i < 2_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 2))
  expect(done()).toBe(true)
}
