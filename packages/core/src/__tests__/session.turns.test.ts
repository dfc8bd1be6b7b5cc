/**
 * What a UI kit needs around the hook: `submit(text)` for a composer that owns its text,
 * `canSend` for its send button, and each turn's ending once (`onTurnEnd`, the hook's
 * `onFinish`/`onError`) in every tab that saw it run, never for a turn that ended before it looked.
 */
import { describe, expect, it, vi } from 'vitest'
import type { PreviewChatSession, TurnEnding } from '../index'
import { createPreviewChatClient } from '../index'
import {
  assistantMessage,
  createScriptedServer,
  empty,
  finishedTurn,
  key,
  runningTurn,
  settle,
  setup,
  snapshot,
  startLiveTurn,
  userMessage,
  useFakeTimersInEachTest,
} from './harness'
import { broadcastNetwork } from './world/broadcastChannel'
import { relayIn } from './world/relay'

useFakeTimersInEachTest()

const ended = (status: 'success' | 'error' | 'cancelled' = 'success') =>
  snapshot([
    userMessage('e1', 'Q', status),
    {
      ...assistantMessage('e1', [{ type: 'text', text: 'Answer' }], status),
      ...(status === 'error' && { executionError: 'The model failed.' }),
    },
  ])

function endings(t: ReturnType<typeof setup>) {
  const seen: TurnEnding[] = []
  t.session.onTurnEnd((ending) => seen.push(ending))
  return seen
}

describe('submit(text) and canSend [R-SUBMIT-TEXT]', () => {
  it('sends the text given, leaves the draft alone, and canSend ignores the draft [R-CAN-SEND]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    expect(t.session.getState()).toMatchObject({ canSend: true, canSubmit: false, draft: '' })
    t.session.setDraft('still typing')
    const sent = t.session.submit('From the composer')
    expect(t.session.getState()).toMatchObject({ canSend: false, status: 'submitting' })
    await settle()
    expect(t.server.requests.at(-1)).toMatchObject({
      method: 'POST',
      body: { message: 'From the composer' },
    })
    t.server.openStream().send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
    expect(await sent).toMatchObject({ outcome: 'accepted' })
    expect(t.session.getState().draft).toBe('still typing')
    t.session.dispose()
  })

  it('a blank text is refused with invalid_request, nothing sent', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    expect(await t.session.submit('   ')).toMatchObject({
      outcome: 'failed',
      error: { code: 'invalid_request' },
    })
    expect(t.server.count('POST')).toBe(0)
    t.session.dispose()
  })
})

describe('onTurnEnd: once per turn this tab saw running, as the record ends it [R-TURN-ENDING]', () => {
  it("this tab's own turn: once, when the record shows it ended, with its messages", async () => {
    const t = setup()
    const seen = endings(t)
    const { stream } = await startLiveTurn(t, 'Q', { type: 'text-delta', id: 'x', delta: 'Answer' })
    stream.send({ type: 'done' })
    stream.close()
    await settle()
    expect(seen).toEqual([]) // done alone does not say how it ended
    t.server.answerRead(ended())
    await settle()
    expect(seen).toMatchObject([
      {
        executionId: 'e1',
        status: 'success',
        error: null,
        messages: [{ role: 'user' }, { role: 'assistant' }],
      },
    ])
    void t.session.refresh()
    await settle()
    t.server.answerRead(ended())
    await settle()
    expect(seen).toHaveLength(1)
    t.session.dispose()
  })

  it('a listener that throws anything (even what String() cannot convert) is reported, and the others still hear it', async () => {
    const warnings: string[] = []
    const t = setup({ onWarning: (message) => void warnings.push(message) })
    t.session.onTurnEnd(() => {
      throw Object.create(null)
    })
    const seen = endings(t)
    const { stream } = await startLiveTurn(t, 'Q', { type: 'text-delta', id: 'x', delta: 'Answer' })
    stream.send({ type: 'done' })
    stream.close()
    await settle()
    t.server.answerRead(ended())
    await settle()
    expect(seen).toMatchObject([{ executionId: 'e1', status: 'success' }])
    expect(warnings).toEqual([expect.stringContaining('An onTurnEnd listener threw')])
    t.session.dispose()
  })

  it('a turn recovered after a reload: reported when a later read shows its end', async () => {
    const t = setup()
    const seen = endings(t)
    t.server.answerRead(runningTurn({ text: 'Ans' }))
    await settle()
    t.push.updated('e1')
    await settle()
    t.server.answerRead(ended('error'))
    await settle()
    expect(seen).toMatchObject([
      {
        executionId: 'e1',
        status: 'error',
        error: { code: 'agent_error', message: 'The model failed.' },
      },
    ])
    t.session.dispose()
  })

  it('a turn followed from another tab: reported in that tab too', async () => {
    const browser = broadcastNetwork()
    const a = setup({ relay: relayIn(browser.tab()) })
    const b = setup({ relay: relayIn(browser.tab()) })
    b.server.answerRead(empty)
    await settle()
    const seenB = endings(b)
    const { stream } = await startLiveTurn(a, 'Q')
    // The channel delivers a task later (a timer, here a fake one).
    await vi.advanceTimersByTimeAsync(0)
    await settle()
    expect(b.session.getState()).toMatchObject({ status: 'following', activeExecutionId: 'e1' })
    stream.send({ type: 'text-delta', id: 'x', delta: 'Answer' }, { type: 'done' })
    stream.close()
    await settle()
    await vi.advanceTimersByTimeAsync(0)
    await settle()
    b.push.updated('e1')
    await settle()
    while (b.server.pendingReads() > 0) {
      b.server.answerRead(ended('cancelled'))
      await settle()
    }
    expect(seenB).toMatchObject([{ executionId: 'e1', status: 'cancelled' }])
    a.session.dispose()
    b.session.dispose()
  })

  it('a turn that had ended before this tab looked is never reported', async () => {
    const t = setup()
    const seen = endings(t)
    t.server.answerRead(snapshot(finishedTurn('e0', 'Earlier', 'Done')))
    await settle()
    void t.session.refresh()
    await settle()
    t.server.answerRead(snapshot(finishedTurn('e0', 'Earlier', 'Done')))
    await settle()
    expect(seen).toEqual([])
    t.session.dispose()
  })
})

describe('loaded: "not read yet" is not "empty" [R-LOADED-NOT-EMPTY]', () => {
  it('is false until the first read answers, then true; a new thread and a 404 are loaded too', async () => {
    const t = setup()
    expect(t.session.getState()).toMatchObject({ loaded: false, messages: [] })
    t.server.answerRead(empty)
    await settle()
    expect(t.session.getState()).toMatchObject({ loaded: true, messages: [] })
    t.session.dispose()
    const fresh = setup({ isNew: true })
    expect(fresh.session.getState().loaded).toBe(true)
    fresh.session.dispose()
    const missing = setup()
    missing.server.answerRead({ status: 404, body: { code: 404, message: 'No such thread' } })
    await settle()
    expect(missing.session.getState()).toMatchObject({ loaded: true, notFound: true })
    missing.session.dispose()
  })
})

describe('prefetch: the first read started before anything renders [R-READ-PREFETCH]', () => {
  /** A client as a page makes it, before anything subscribes to a session. */
  function page(minReadIntervalMs = 0) {
    const server = createScriptedServer()
    const client = createPreviewChatClient({
      fetch: server.fetch,
      push: false,
      relay: false,
      storage: null,
      minReadIntervalMs,
      resumeSignal: () => () => {},
    })
    return { server, client }
  }

  it('a read on its way when the session starts is its first read: one GET, then the record', async () => {
    const { client, server } = page()
    client.prefetch(key)
    await settle()
    expect(server.count('GET')).toBe(1)
    const session = client.session(key)
    const stop = session.subscribe(() => {})
    await settle()
    expect(session.getState().status).toBe('recovering')
    expect(server.count('GET')).toBe(1) // joined, not repeated
    server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    expect(session.getState()).toMatchObject({ status: 'idle', loaded: true })
    expect(session.getState().messages).toHaveLength(2)
    expect(server.count('GET')).toBe(1)
    stop()
    session.dispose()
  })

  it('a prefetch that answered with a turn running counts as the first read: the next keeps its distance', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    try {
      const { server, client } = page(250)
      client.prefetch(key)
      await settle()
      server.answerRead(runningTurn({ text: 'Partial' }))
      await settle()
      vi.advanceTimersByTime(100) // the page's code runs; React mounts
      const session = client.session(key)
      const states: string[] = []
      const stop = session.subscribe((state) => states.push(state.status))
      await settle()
      // Following the running turn from the prefetched record, with no second GET yet…
      expect(session.getState()).toMatchObject({ status: 'following', loaded: true })
      expect(server.count('GET')).toBe(1)
      // …until the read interval since the prefetch started has passed.
      vi.advanceTimersByTime(149)
      await settle()
      expect(server.count('GET')).toBe(1)
      vi.advanceTimersByTime(1)
      await settle()
      expect(server.count('GET')).toBe(2)
      expect(states).not.toContain('recovering')
      stop()
      session.dispose()
    } finally {
      vi.useRealTimers()
    }
  })

  /**
   * What a page sees, step by step: each action through the reducer with the session's status
   * and whether its record is loaded, and `resolved` where the prefetch's promise resolved.
   */
  function watch(session: PreviewChatSession, prefetch: () => Promise<void>) {
    const seen: string[] = []
    session.inspect(({ action, commands }) => {
      const settles = commands.some((c) => c.type === 'settle-refresh') ? ' settles' : ''
      const { status, loaded } = session.getState()
      seen.push(`${action.type}: ${status}${loaded ? ', loaded' : ''}${settles}`)
    })
    let resolved = false
    prefetch().then(
      () => {
        resolved = true
        const { status, loaded, messages } = session.getState()
        seen.push(`resolved: ${status}${loaded ? ', loaded' : ''}, ${messages.length} messages`)
      },
      () => seen.push('rejected'),
    )
    return { seen, resolved: () => resolved }
  }

  it('resolves once the read has answered, not before, with the record in the state [R-READ-PREFETCH-SETTLES]', async () => {
    const { client, server } = page()
    const session = client.session(key)
    const { seen, resolved } = watch(session, () => client.prefetch(key))
    await settle()
    expect(resolved()).toBe(false)
    expect(server.pendingReads()).toBe(1)
    server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    expect(seen).toEqual([
      'prefetch-requested: recovering',
      'read-started: recovering',
      'snapshot: idle, loaded settles',
      'resolved: idle, loaded, 2 messages',
    ])
    // The session takes it as its first read: nothing read again when it starts.
    const stop = session.subscribe(() => {})
    await settle()
    expect(server.count('GET')).toBe(1)
    stop()
    session.dispose()
  })

  it('resolves after a failed read, and never rejects: an error, a page, junk, no network [R-READ-PREFETCH-SETTLES]', async () => {
    for (const answer of [
      { status: 500 },
      '<!doctype html><title>Sign in</title>',
      { status: 200, body: { data: { messages: 'nope' } } },
      'network-error' as const,
    ]) {
      const { client, server } = page()
      const session = client.session(key)
      const { seen } = watch(session, () => client.prefetch(key))
      await settle()
      server.answerRead(answer)
      await settle()
      expect(seen).toEqual([
        'prefetch-requested: recovering',
        'read-started: recovering',
        'read-failed: recovering settles',
        'resolved: recovering, 0 messages',
      ])
      expect(session.getState().readError).not.toBeNull()
      session.dispose()
    }
  })

  it('resolves when the session is disposed mid-read, and the read is aborted [R-READ-PREFETCH-SETTLES]', async () => {
    const { client, server } = page()
    const session = client.session(key)
    const { seen } = watch(session, () => client.prefetch(key))
    await settle()
    session.dispose()
    await settle()
    expect(seen.slice(0, 4)).toEqual([
      'prefetch-requested: recovering',
      'read-started: recovering',
      'disposed: recovering settles',
      'resolved: recovering, 0 messages',
    ])
    expect(server.fetch.mock.calls[0]?.[1]?.signal?.aborted).toBe(true)
    // A disposed session's prefetch resolves at once and reads nothing (the client hands out a
    // fresh session for the thread from now on).
    await session.prefetch()
    expect(server.count('GET')).toBe(1)
  })

  it('resolves when the app cancels the read (cancelQueries) [R-READ-PREFETCH-SETTLES]', async () => {
    const { client } = page()
    const session = client.session(key)
    const { seen } = watch(session, () => client.prefetch(key))
    await settle()
    await client.queryClient.cancelQueries({ queryKey: client.queryKey(key) })
    await settle()
    expect(seen).toContain('resolved: recovering, 0 messages')
    expect(seen.indexOf('read-cancelled: recovering settles')).toBeLessThan(
      seen.indexOf('resolved: recovering, 0 messages'),
    )
    session.dispose()
  })

  it('resolves at once when the read is done (answered, or a new thread), and joins one on its way [R-READ-PREFETCH-SETTLES]', async () => {
    const { client, server } = page()
    const first = client.prefetch(key)
    await settle()
    // A second call while the read is on its way waits for that same read.
    let second = false
    void client.prefetch(key).then(() => (second = true))
    await settle()
    expect(second).toBe(false)
    expect(server.count('GET')).toBe(1)
    server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await first
    await settle()
    expect(second).toBe(true)
    // Read already: resolves without a read.
    const session = client.session(key)
    const { seen } = watch(session, () => client.prefetch(key))
    await settle()
    expect(seen).toEqual([
      'prefetch-requested: idle, loaded settles',
      'resolved: idle, loaded, 2 messages',
    ])
    expect(server.count('GET')).toBe(1)
    // A thread the app minted (isNew) has nothing to read.
    const fresh = { ...key, threadId: 'new-thread', isNew: true }
    await client.prefetch(fresh)
    expect(server.count('GET')).toBe(1)
    session.dispose()
    client.session(fresh).dispose()
  })

  it('while the session is listened to, resolves once its reads settle, reading nothing more [R-READ-PREFETCH-SETTLES]', async () => {
    const { client, server } = page()
    const session = client.session(key)
    const stop = session.subscribe(() => {})
    await settle()
    const { seen, resolved } = watch(session, () => client.prefetch(key))
    await settle()
    expect(resolved()).toBe(false) // the session's first read is on its way
    server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    expect(seen).toEqual([
      'prefetch-requested: recovering',
      'snapshot: idle, loaded settles',
      'resolved: idle, loaded, 2 messages',
    ])
    expect(server.count('GET')).toBe(1)
    stop()
    session.dispose()
  })

  it('a prefetch that answered before the session starts shows at once and is not read again', async () => {
    const { client, server } = page()
    client.prefetch(key)
    await settle()
    server.answerRead(snapshot(finishedTurn('e1', 'Q', 'A')))
    await settle()
    const session = client.session(key)
    const stop = session.subscribe(() => {})
    await settle()
    expect(session.getState()).toMatchObject({ status: 'idle', loaded: true })
    expect(session.getState().messages).toHaveLength(2)
    expect(server.count('GET')).toBe(1)
    stop()
    session.dispose()
  })
})
