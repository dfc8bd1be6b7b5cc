/**
 * What an adversary found with three tabs, two devices, skewed clocks, full storage and junk on
 * the relay (issue 19, rows a–p): each rule, named, as a person meets it. Each test failed on
 * the engine before these rules (1860925) and passes now.
 */
import { describe, expect, it, vi } from 'vitest'
import { createPreviewChatClient, type DraftStorage, type TabRelay } from '../index'
import {
  assistantMessage,
  empty,
  finishedTurn,
  key,
  now,
  runningTurn,
  settle,
  setup,
  snapshot,
  startLiveTurn,
  userMessage,
  useFakeTimersInEachTest,
} from './harness'
import { storageOrigin } from './world/storage'

useFakeTimersInEachTest()

/** Tabs of one origin whose relay delivers only when the test flushes it (or injects anything). */
function createSlowRelay() {
  const listeners = new Map<string, (data: unknown) => void>()
  let queue: { from: string; data: unknown }[] = []
  return {
    relay(tab: string): TabRelay {
      return {
        post: (message) => void queue.push({ from: tab, data: structuredClone(message) }),
        listen(listener) {
          listeners.set(tab, listener)
          return () => listeners.delete(tab)
        },
      }
    },
    /** Delivers what was posted so far, to every tab but its sender. */
    flush() {
      const due = queue
      queue = []
      for (const { from, data } of due)
        for (const [tab, listener] of listeners) if (tab !== from) listener(data)
    },
    /** Anything on the channel, as another build of the app (or anything else) might post. */
    inject(data: unknown) {
      for (const listener of listeners.values()) listener(data)
    },
  }
}

/** `names` tabs idle on an empty thread, each with its own scripted server, one relay. */
async function idleTabs(names: string[], options: { submitTimeoutMs?: number } = {}) {
  const hub = createSlowRelay()
  const warnings: string[] = []
  const tabs = names.map((name) =>
    setup({
      relay: hub.relay(name),
      tabId: name,
      onWarning: (message) => warnings.push(message),
      ...options,
    }),
  )
  for (const tab of tabs) tab.server.answerRead(empty)
  await settle()
  return { hub, tabs, warnings }
}

const suspendedRecord = (runId = 'run-1') =>
  snapshot(
    [
      userMessage('e1', 'Pay?'),
      assistantMessage('e1', [
        {
          type: 'tool-call',
          toolName: 'pay',
          toolCallId: 'c1',
          input: {},
          suspendPayload: { toolCallId: 'c1', runId, toolName: 'pay', input: {} },
        },
      ]),
    ],
    null,
    [{ toolCallId: 'c1', runId }],
  )

describe('a Stop belongs to the message it was pressed for (row a)', () => {
  it("a Stop held for a message that is refused is dropped: another device's turn is never stopped", async () => {
    const y = setup()
    y.server.answerRead(empty) // device Y has not seen device X's turn yet
    await settle()
    y.session.setDraft('Mine')
    const sent = y.session.submit()
    const stopped = y.session.stop()
    await settle()
    y.server
      .openStream()
      .send({ type: 'error', message: 'Busy.', errorCode: 'turn_already_running' })
    expect(await sent).toMatchObject({ outcome: 'failed', error: { code: 'turn_already_running' } })
    await settle()
    y.server.answerRead(runningTurn({ executionId: 'eX' })) // X's turn, recorded
    await settle()
    expect(y.server.count('DELETE')).toBe(0)
    expect(await stopped).toEqual({ cancelRequested: false })
    expect(y.session.getState()).toMatchObject({ status: 'following', activeExecutionId: 'eX' })
    y.session.dispose()
  })
})

describe('another tab holds the gate from its POST until its own outcome, per tab (rows b, c)', () => {
  it("tab B's refusal does not end tab A's hold: tab C stays shut and posts nothing", async () => {
    const { hub, tabs } = await idleTabs(['A', 'B', 'C'])
    const [a, b, c] = tabs as [
      ReturnType<typeof setup>,
      ReturnType<typeof setup>,
      ReturnType<typeof setup>,
    ]
    a.session.setDraft('From A')
    b.session.setDraft('From B')
    void a.session.submit() // A's POST is slow to be accepted
    const refused = b.session.submit()
    hub.flush()
    await settle()
    b.server.failPost(429)
    expect(await refused).toMatchObject({ outcome: 'failed' })
    await settle()
    hub.flush()
    await settle()
    if (c.server.pendingReads() > 0) c.server.answerRead(empty)
    await settle()
    expect(c.session.getState()).toMatchObject({ status: 'following', isRunning: true })
    c.session.setDraft('From C')
    expect(await c.session.submit()).toEqual({ outcome: 'busy' })
    expect(c.server.count('POST')).toBe(0)
    for (const tab of tabs) tab.session.dispose()
  })

  it('two tabs that posted at once open their gates within one read once both turns ended', async () => {
    const { hub, tabs } = await idleTabs(['A', 'B'])
    const [a, b] = tabs as [ReturnType<typeof setup>, ReturnType<typeof setup>]
    a.session.setDraft('From A')
    b.session.setDraft('From B')
    const sentA = a.session.submit()
    const sentB = b.session.submit()
    hub.flush()
    await settle()
    // A server that takes a second turn while one runs (n8n 2.41) accepts both.
    const streamA = a.server.openStream()
    const streamB = b.server.openStream()
    streamA.send({ type: 'execution-started', executionId: 'eA', sessionId: 't1' })
    streamB.send({ type: 'execution-started', executionId: 'eB', sessionId: 't1' })
    await settle()
    hub.flush()
    expect(await sentA).toMatchObject({ outcome: 'accepted' })
    expect(await sentB).toMatchObject({ outcome: 'accepted' })
    for (const stream of [streamA, streamB]) {
      stream.send({ type: 'text-delta', id: 'x', delta: 'Done' }, { type: 'done' })
      stream.close()
    }
    await settle()
    hub.flush()
    await settle()
    const ended = snapshot([
      ...finishedTurn('eA', 'From A', 'Done'),
      ...finishedTurn('eB', 'From B', 'Done'),
    ])
    for (const tab of tabs) {
      while (tab.server.pendingReads() > 0) {
        tab.server.answerRead(ended)
        await settle()
      }
    }
    for (const tab of tabs)
      expect(tab.session.getState()).toMatchObject({ status: 'idle', isRunning: false })
    for (const tab of tabs) tab.session.dispose()
  })
})

describe('the relay is parsed like the wire (row d)', () => {
  it('junk on the channel changes nothing, throws nothing and is reported once', async () => {
    const { hub, tabs, warnings } = await idleTabs(['A'])
    const [a] = tabs as [ReturnType<typeof setup>]
    const thread = JSON.stringify([key.projectId, key.agentId, key.threadId])
    for (const junk of [
      null,
      { thread },
      { kind: 'turn', thread },
      'hello',
      { v: 2, kind: 'posting' },
    ])
      expect(() => hub.inject(junk)).not.toThrow()
    await settle()
    expect(a.session.getState()).toMatchObject({ status: 'idle' })
    expect(warnings.filter((w) => w.includes('relay')).length).toBeGreaterThan(0)
    a.session.dispose()
  })

  it.each([
    ['a BigInt', () => 10n],
    [
      'a cycle',
      () => {
        const cycle: Record<string, unknown> = {}
        cycle.self = cycle
        return cycle
      },
    ],
  ])(
    'a relayed turn whose tool input holds what JSON cannot (%s) is junk: ignored, reported, never shown or kept [R-RELAY-PARSED]',
    async (_, input) => {
      const { hub, tabs, warnings } = await idleTabs(['A'])
      const [a] = tabs as [ReturnType<typeof setup>]
      const thread = JSON.stringify([key.projectId, key.agentId, key.threadId])
      const toolCall = { type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: input() }
      const turn = {
        executionId: 'e9',
        sessionId: 't1',
        user: userMessage('e9', 'From another build', 'running'),
        assistant: assistantMessage('e9', [toolCall as never], 'running'),
        streams: {},
        delegations: {},
        resumes: null,
        ended: false,
      }
      expect(() => hub.inject({ v: 1, tab: 'Z', thread, kind: 'turn', turn, seq: 0 })).not.toThrow()
      await settle()
      expect(a.session.getState()).toMatchObject({ status: 'idle', messages: [] })
      expect(warnings).toEqual([expect.stringContaining('not a JSON value')])
      a.session.dispose()
    },
  )

  it('a relayed turn that no read confirms holds the gate no longer than one read after submitTimeoutMs', async () => {
    const { hub, tabs } = await idleTabs(['A'], { submitTimeoutMs: 30_000 })
    const [a] = tabs as [ReturnType<typeof setup>]
    const thread = JSON.stringify([key.projectId, key.agentId, key.threadId])
    const turn = {
      executionId: 'unannounced:9',
      sessionId: 't1',
      user: userMessage('unannounced:9', 'Ghost', 'running'),
      assistant: assistantMessage('unannounced:9', [], 'running'),
      streams: {},
      delegations: {},
      resumes: null,
      ended: false,
    }
    hub.inject({ v: 1, tab: 'Z', thread, kind: 'turn', turn, seq: 0 })
    await settle()
    expect(a.session.getState().status).toBe('following')
    await vi.advanceTimersByTimeAsync(30_000)
    await settle()
    a.server.answerRead(empty) // the record knows of no turn
    await settle()
    expect(a.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    a.session.dispose()
  })
})

describe("no decision compares this machine's clock with a server's timestamp (row e)", () => {
  it('a derived turn with no output yet holds the gate on a client whose clock is an hour fast', async () => {
    const t = setup({ now: () => now + 3_600_000 })
    // The released n8n: no activeExecutionId, no status on the person's message (derived).
    t.server.answerRead({
      status: 200,
      body: {
        data: {
          messages: [
            {
              ...userMessage('e1', 'Just sent'),
              executionStatus: undefined,
              createdAt: new Date(now - 5_000).toISOString(),
            },
          ],
          openSuspensions: [],
        },
      },
    })
    await settle()
    expect(t.session.getState()).toMatchObject({
      status: 'following',
      activeExecutionId: 'e1',
      canSubmit: false,
    })
    // Silent for SILENT_TURN_MAX_AGE_MS on this tab's own clock: it no longer holds the gate.
    await vi.advanceTimersByTimeAsync(120_000)
    await settle()
    expect(t.session.getState().activeExecutionId).toBeNull()
    t.session.dispose()
  })
})

describe('the live view never hides newer recorded progress (row f)', () => {
  it("shows the record's text when this tab's own stream stalls behind it, and the live text once it is ahead", async () => {
    const t = setup({ streamSilenceMs: 5_000 })
    const { stream } = await startLiveTurn(t, 'Q', { type: 'text-delta', id: 'x', delta: 'Part' })
    const text = () => {
      const last = t.session.getState().messages.at(-1)?.content[0]
      return last?.type === 'text' ? last.text : ''
    }
    expect(text()).toBe('Part')
    await vi.advanceTimersByTimeAsync(5_000) // the stream stalls (a buffering proxy)
    t.push.updated('e1')
    await settle()
    const recorded = 'Part of an answer that the server recorded while the stream stalled.'
    t.server.answerRead(runningTurn({ text: recorded }))
    await settle()
    expect(text()).toBe(recorded)
    stream.send({ type: 'text-delta', id: 'x', delta: recorded.slice(4) + ' And more.' })
    await settle()
    expect(text()).toBe(`${recorded} And more.`)
    t.session.dispose()
  })
})

describe('a draft the storage refuses is kept for that value only (row g)', () => {
  it('a 2 MB paste, deleted, then a normal message: a reload brings back the normal one, never the stale one', () => {
    // A browser's localStorage with room for a million code units: a write past it throws.
    const storage = storageOrigin({ quota: 1_000_000 }).tab().localStorage
    const open = () =>
      createPreviewChatClient({
        storage,
        push: false,
        relay: false,
        onWarning: () => {},
        fetch: () => new Promise(() => {}),
      })
    const first = open().session(key)
    first.setDraft('An earlier draft')
    first.setDraft('x'.repeat(2_000_000))
    expect(first.getState().draft).toHaveLength(2_000_000)
    // A reload now: the stale earlier draft is gone rather than shown as if it were the latest.
    expect(open().session(key).getState().draft).toBe('')
    first.setDraft('A normal message')
    expect(open().session(key).getState().draft).toBe('A normal message')
    first.dispose()
  })
})

describe("a storage of the app's own is read, never trusted [R-DRAFT-STORAGE]", () => {
  it('throws something that cannot be made a string, answers a non-string: one warning, nothing thrown, no draft lost', () => {
    const warnings: string[] = []
    const hostile = Object.create(null) as object
    const storage = {
      getItem: () => 42 as unknown as string,
      setItem: () => {
        throw hostile
      },
      removeItem: () => {},
    } satisfies DraftStorage
    const session = createPreviewChatClient({
      storage,
      push: false,
      relay: false,
      onWarning: (message) => void warnings.push(message),
      fetch: () => new Promise(() => {}),
    }).session(key)
    expect(session.getState().draft).toBe('')
    session.setDraft('Kept in memory')
    expect(session.getState().draft).toBe('Kept in memory')
    expect(warnings).toEqual([expect.stringContaining('A draft is kept in memory only')])
    session.dispose()
  })
})

describe('ids that cannot travel in a URL path segment are refused (row h)', () => {
  it("client.session() refuses '.' and '..' with invalid_request naming the id", () => {
    const client = createPreviewChatClient({
      push: false,
      relay: false,
      fetch: () => new Promise(() => {}),
    })
    for (const threadId of ['.', '..'])
      expect(() => client.session({ ...key, threadId })).toThrow(
        expect.objectContaining({
          code: 'invalid_request',
          message: expect.stringContaining(`"${threadId}"`),
        }),
      )
  })
})

describe('repeated Stops share one request in every path, and resolve alike (row i)', () => {
  it('two quick Stops of a turn that is only suspended send one cancellation', async () => {
    const t = setup()
    t.server.answerRead(suspendedRecord())
    await settle()
    const first = t.session.stop()
    const second = t.session.stop()
    await settle()
    expect(t.server.count('DELETE')).toBe(1)
    t.server.answerStop({ data: { cancelled: true } })
    expect([await first, await second]).toEqual([
      { cancelRequested: true },
      { cancelRequested: true },
    ])
    t.session.dispose()
  })
})

describe('dispose() ends what is under way (row k)', () => {
  it('a submission under way resolves disposed', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Q')
    const sent = t.session.submit()
    await settle()
    t.session.dispose()
    expect(await sent).toMatchObject({ outcome: 'failed', error: { code: 'disposed' } })
  })

  it('a Stop request in flight is aborted and resolves at once', async () => {
    const t = setup()
    t.server.answerRead(runningTurn())
    await settle()
    const stopped = t.session.stop()
    await settle()
    expect(t.server.count('DELETE')).toBe(1)
    t.session.dispose()
    const outcome = await Promise.race([stopped, settle().then(() => 'still pending')])
    expect(outcome).toEqual({ cancelRequested: false })
  })
})

describe('a suspension seen live is open at once (rows m, n)', () => {
  it('Stop before the next read cancels its run', async () => {
    const t = setup()
    await startLiveTurn(t, 'Pay?', {
      type: 'tool-call-suspended',
      payload: { toolCallId: 'c1', runId: 'run-1', toolName: 'pay', input: {} },
    })
    expect(t.session.getState().openSuspensions).toMatchObject([
      { toolCallId: 'c1', runId: 'run-1' },
    ])
    const stopped = t.session.stop()
    await settle()
    expect(t.server.requests.at(-1)).toMatchObject({
      method: 'DELETE',
      path: expect.stringMatching(/\/runs\/run-1$/),
    })
    t.server.answerStop({ data: { cancelled: true } })
    expect(await stopped).toEqual({ cancelRequested: true })
    t.session.dispose()
  })

  it('the gate stays shut while its cancellation is pending, until it is answered and read', async () => {
    const t = setup()
    t.server.answerRead(suspendedRecord())
    await settle()
    void t.session.stop()
    await settle()
    t.session.setDraft('Next')
    const sent = await Promise.race([t.session.submit(), settle().then(() => 'posted')])
    expect(sent).toEqual({ outcome: 'busy' })
    expect(t.server.count('POST')).toBe(0)
    t.server.answerStop({ data: { cancelled: true } })
    await settle()
    expect(t.session.getState().status).toBe('stopping')
    t.server.answerRead(snapshot(finishedTurn('e1', 'Pay?', 'Cancelled')))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', canSubmit: true })
    t.session.dispose()
  })
})

describe('the push channel connecting after a read reads again (row o)', () => {
  it('reads what was recorded between the mount read and the channel opening', async () => {
    const t = setup()
    t.server.answerRead(runningTurn({ text: 'A' }))
    await settle()
    t.push.connection(true)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.session.dispose()
  })
})

describe("a read that names another execution after this one's execution-started ends it (row p)", () => {
  it('a resume whose stream is cut, then read as not running, is idle and may be answered again', async () => {
    const t = setup()
    t.server.answerRead(suspendedRecord())
    await settle()
    const suspension = t.session.getState().openSuspensions[0]!
    const resumed = t.session.resume(suspension, { approved: true })
    await settle()
    const stream = t.server.openStream()
    stream.send({ type: 'execution-started', executionId: 'e2', sessionId: 't1' })
    await settle()
    expect(await resumed).toMatchObject({ outcome: 'accepted', executionId: 'e2' })
    stream.fail()
    await settle()
    t.server.answerRead(suspendedRecord()) // the record: nothing runs, the suspension still open
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    expect(t.session.getState().openSuspensions).toMatchObject([{ toolCallId: 'c1' }])
    const again = t.session.resume(t.session.getState().openSuspensions[0]!, { approved: true })
    await settle()
    expect(t.server.count('POST')).toBe(2)
    t.server.openStream().send({ type: 'execution-started', executionId: 'e3', sessionId: 't1' })
    expect(await again).toMatchObject({ outcome: 'accepted' })
    t.session.dispose()
  })
})

describe("a Stop pressed while this tab posts is that message's, whatever a read shows (found in review)", () => {
  it("never DELETEs another device's execution that a read named meanwhile", async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    const submitted = t.session.submit('mine')
    await settle()
    // The server is slow to accept; another device's turn is notified and read after streamSilenceMs.
    t.push.updated('eX')
    await vi.advanceTimersByTimeAsync(5_100)
    t.server.answerRead(runningTurn({ executionId: 'eX', question: 'other device' }))
    await settle()
    expect(t.session.getState().status).toBe('submitting')
    void t.session.stop()
    await settle()
    expect(t.server.count('DELETE')).toBe(0)
    t.session.dispose()
    await submitted
  })

  it('a stop() made after a suspended run was cancelled resolves as the first did', async () => {
    const t = setup()
    t.server.answerRead(suspendedRecord())
    await settle()
    const first = t.session.stop()
    await settle()
    t.server.answerStop({ data: { cancelled: true } })
    expect(await first).toEqual({ cancelRequested: true })
    const second = t.session.stop()
    expect(await Promise.race([second, settle().then(() => 'pending')])).toEqual({
      cancelRequested: true,
    })
    t.session.dispose()
  })
})
