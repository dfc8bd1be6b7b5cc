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
import { parseTrace, replayTrace, TRACE_VERSION, type EngineTrace } from '../engine/trace'
import { recordTrace } from '../effects/recordTrace'
import { createPreviewChatClient, PreviewChatError, type PreviewChatSession } from '../index'

let backend: PreviewChatBackend
afterEach(() => backend.close())

/** Alice's tab on the reference server (spec flavor), with `user` as who the requests say. */
function session(threadId: string, user = 'alice'): PreviewChatSession {
  backend = createPreviewChatBackend({ deltaMs: 0, snapshotMs: 5 })
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
    expect(replayTrace(throughJson(trace))).toBeNull()
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
    expect(replayTrace(throughJson(recording.trace()))).toBeNull()
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
    expect(() => parseTrace({ version: 2 })).toThrow(/version 2; this engine replays version 1/)
    expect(() => parseTrace(null)).toThrow(/JSON object/)
    expect(() =>
      parseTrace({ version: TRACE_VERSION, config: {}, initial: {}, steps: [{ action: {} }] }),
    ).toThrow(/Step 0/)
  })
})

async function until(done: () => boolean) {
  for (let i = 0; i < 2_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 2))
  expect(done()).toBe(true)
}
