import { describe, expect, it, vi } from 'vitest'
import type { TurnEvent } from '../contract'
import type { HistorySnapshot, RelayMessage } from '../index'
import { applyTurnEvents, startTurn } from '../engine/fold'
import {
  empty,
  finishedTurn,
  key,
  now,
  runningTurn,
  settle,
  setup,
  snapshot,
  useFakeTimersInEachTest,
  aMessageId,
} from './harness'
import { explain } from '../wire/contract/explain'
import { broadcastNetwork } from './world/broadcastChannel'
import { relayIn } from './world/relay'
import { storageOrigin } from './world/storage'
import { nextTask } from './world/webSocket'

const runningElsewhere = runningTurn({ question: 'Other tab' })

describe('the gate (spec: "New-message submission stays blocked while a turn runs. The draft remains editable.")', () => {
  it('is closed until the first read is done, and sends nothing meanwhile [R-GATE-FIRST-READ]', async () => {
    const t = setup()
    t.session.setDraft('Early')
    expect(t.session.getState()).toMatchObject({ status: 'recovering', canSubmit: false })
    expect(await t.session.submit()).toEqual({ outcome: 'busy' })
    t.server.answerRead(empty)
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', canSubmit: true, draft: 'Early' })
    expect(t.server.count('POST')).toBe(0)
    t.session.dispose()
  })

  it('is closed while a turn runs; the draft stays editable; nothing is sent [R-GATE-RUNNING R-DRAFT-EDITABLE]', async () => {
    const t = setup()
    t.server.answerRead(runningElsewhere)
    await settle()
    t.session.setDraft('Mine')
    t.session.setDraft('Mine, edited')
    expect(t.session.getState()).toMatchObject({
      status: 'following',
      canSubmit: false,
      draft: 'Mine, edited',
      isRunning: true,
    })
    expect(await t.session.submit()).toEqual({ outcome: 'busy' })
    expect(t.server.count('POST')).toBe(0)
    t.session.dispose()
  })

  it('is closed while its own submission is in flight: a double click posts once [R-GATE-OWN-POST R-POST-ONCE]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Once')
    const first = t.session.submit()
    const second = await t.session.submit()
    expect(second).toEqual({ outcome: 'busy' })
    await settle()
    t.server.openStream().send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
    expect(await first).toMatchObject({ outcome: 'accepted' })
    expect(t.server.count('POST')).toBe(1)
    t.session.dispose()
  })

  it('refuses a blank draft with a typed error, without a request [R-GATE-BLANK]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('   ')
    expect(t.session.getState().canSubmit).toBe(false)
    expect(await t.session.submit()).toMatchObject({
      outcome: 'failed',
      error: { code: 'invalid_request' },
    })
    expect(t.server.count('POST')).toBe(0)
    t.session.dispose()
  })

  it('turn_already_running keeps the draft, says so, and follows the running turn [R-GATE-CONFLICT]', async () => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Competing')
    const result = t.session.submit()
    await settle()
    t.server.openStream().send({
      type: 'error',
      message: 'A turn is already running in this conversation.',
      errorCode: 'turn_already_running',
    })
    expect(await result).toMatchObject({
      outcome: 'failed',
      error: { code: 'turn_already_running' },
    })
    await settle()
    expect(t.session.getState()).toMatchObject({
      draft: 'Competing',
      error: { code: 'turn_already_running' },
    })
    t.server.answerRead(runningElsewhere)
    await settle()
    expect(t.session.getState()).toMatchObject({
      status: 'following',
      draft: 'Competing',
      canSubmit: false,
    })
    expect(t.statuses()).toEqual(['recovering', 'idle', 'submitting', 'idle', 'following'])
    t.session.dispose()
  })

  it.each([
    [400, 'bad_request'],
    [403, 'forbidden'],
    [413, 'payload_too_large'],
  ] as const)('an HTTP %i on submit keeps the draft and reports %s', async (status, code) => {
    const t = setup()
    t.server.answerRead(empty)
    await settle()
    t.session.setDraft('Kept')
    const result = t.session.submit()
    await settle()
    t.server.failPost(status)
    expect(await result).toMatchObject({ outcome: 'failed', error: { code, status } })
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', draft: 'Kept', error: { code } })
    t.session.dispose()
  })

  it('an in-band refusal that is not a conflict (Session not found) keeps the draft too [R-GATE-REFUSED]', async () => {
    const t = setup()
    t.server.answerRead(snapshot(finishedTurn('e0', 'a', 'b')))
    await settle()
    t.session.setDraft('Kept')
    const result = t.session.submit()
    await settle()
    t.server.openStream().send({ type: 'error', message: 'Session not found' })
    expect(await result).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'agent_error',
        // The server's words, and what to do (issue 38).
        message: `Session not found${explain('message-refused')}`,
      },
    })
    expect(t.session.getState().draft).toBe('Kept')
    t.session.dispose()
  })
})

describe('drafts across reloads [R-DRAFT-RELOAD]', () => {
  it('restores the stored draft, stores edits, and removes it once the turn is accepted', async () => {
    // The origin's localStorage, as the page before the reload and the page after it each see it.
    const origin = storageOrigin()
    const first = setup({ storage: origin.tab().localStorage, scope: 'alice' })
    first.session.setDraft('Typed before the reload')
    expect(Object.values(origin.entries())).toEqual(['Typed before the reload'])
    first.session.dispose()

    const second = setup({ storage: origin.tab().localStorage, scope: 'alice' })
    expect(second.session.getState().draft).toBe('Typed before the reload')
    second.server.answerRead(empty)
    await settle()
    void second.session.submit()
    await settle()
    second.server
      .openStream()
      .send({ type: 'execution-started', executionId: 'e1', sessionId: key.threadId })
    await settle()
    expect(origin.entries()).toEqual({})
    second.session.dispose()

    // Another user's scope does not see it.
    const page = origin.tab().localStorage
    page.setItem('x', 'y')
    const bob = setup({ storage: page, scope: 'bob' })
    expect(bob.session.getState().draft).toBe('')
    bob.session.dispose()
  })

  it('a storage that throws does not break typing [R-DRAFT-STORAGE]', () => {
    // An origin whose quota is spent: every write throws a QuotaExceededError, as a browser's.
    const storage = storageOrigin({ quota: 0 }).tab().localStorage
    const t = setup({ storage })
    t.session.setDraft('Still typed')
    expect(t.session.getState().draft).toBe('Still typed')
    t.session.dispose()
  })
})

describe('new threads [R-GATE-NEW-THREAD]', () => {
  it('sends newSession: true with the first message of a thread with no history', async () => {
    const t = setup()
    t.server.answerRead({ status: 404 })
    await settle()
    t.session.setDraft('First')
    void t.session.submit()
    await settle()
    expect(t.server.requests.at(-1)?.body).toEqual({
      message: 'First',
      sessionId: 't1',
      newSession: true,
      messageId: aMessageId,
    })
    t.session.dispose()
  })

  it('a thread the app minted (isNew) needs no first read', async () => {
    const t = setup({ isNew: true })
    t.session.setDraft('First')
    expect(t.session.getState()).toMatchObject({ status: 'idle', canSubmit: true })
    void t.session.submit()
    await settle()
    expect(t.server.requests.map((r) => r.method)).toEqual(['POST'])
    expect(t.server.requests[0]?.body).toMatchObject({ newSession: true })
    t.session.dispose()
  })

  it('does not send newSession for a thread with history', async () => {
    const t = setup()
    t.server.answerRead(snapshot(finishedTurn('e0', 'a', 'b')))
    await settle()
    t.session.setDraft('Next')
    void t.session.submit()
    await settle()
    expect(t.server.requests.at(-1)?.body).toEqual({
      message: 'Next',
      sessionId: 't1',
      messageId: aMessageId,
    })
    t.session.dispose()
  })
})

/**
 * This tab's relay, the client's own over world's BroadcastChannel, with the other tab of its
 * origin played by the test on a channel of its own: what either posts arrives a task later, as a
 * browser delivers it (`deliver`: under fake timers, time is advanced instead of waited for).
 */
function otherTab() {
  const browser = broadcastNetwork()
  const relay = relayIn(browser.tab())
  // The client's scope is '' here: the relay's channel is `preview-chat:`.
  const theirs = new (browser.tab().BroadcastChannel)('preview-chat:')
  const thread = JSON.stringify([key.projectId, key.agentId, key.threadId])
  const post = async (message: Record<string, unknown>) => {
    theirs.postMessage({ v: 1, tab: 'other', thread, ...message })
    await deliver()
  }
  return {
    relay,
    /** What this tab posted on the channel, in order (as posted: copies). */
    get posted() {
      return browser.posted
        .map(({ data }) => data as RelayMessage)
        .filter((message) => message.tab !== 'other')
    },
    posting: (active: boolean) => post({ kind: 'posting', active }),
    /** Relays the other tab's turn as it stands once it ended (its first batch, seq 0). */
    relayEndedTurn(executionId: string, question: string, answer: string) {
      const started = startTurn({
        executionId,
        sessionId: key.threadId,
        message: question,
        createdAt: new Date(now).toISOString(),
      })
      const events: TurnEvent[] = [{ type: 'text-delta', id: 't', delta: answer }, { type: 'done' }]
      const turn = applyTurnEvents(started, events, { delegationCharLimit: 4_000, now: () => now })
      return post({ kind: 'turn', turn, seq: 0 })
    },
  }
}

/** Lets the channel deliver what was posted (a task later) and the session take it. */
async function deliver() {
  await settle()
  if (vi.isFakeTimers()) await vi.advanceTimersByTimeAsync(0)
  else await nextTask()
  await settle()
}

/** A session idle on an empty thread, its relay played by the test as another tab. */
async function idleWithAnotherTab(options: { submitTimeoutMs?: number; lingerMs?: number } = {}) {
  const tab = otherTab()
  const t = setup({ relay: tab.relay, ...options })
  t.server.answerRead(empty)
  await settle()
  return { tab, t }
}

describe('the gate while another tab posts (its message sent, its turn not begun) [R-GATE-POSTING]', () => {
  it('is closed from the moment the other tab posts; it opens when that tab says the message was not taken up, after a read [R-GATE-HOLD-NOT-TAKEN]', async () => {
    const { tab, t } = await idleWithAnotherTab()
    t.session.setDraft('Mine')
    await tab.posting(true)
    expect(t.session.getState()).toMatchObject({
      status: 'following',
      canSubmit: false,
      isRunning: true,
      canStop: false,
      draft: 'Mine',
    })
    expect(await t.session.submit()).toEqual({ outcome: 'busy' })
    await tab.posting(false)
    // The server may have taken it all the same (no answer): the record says.
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(empty)
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle', canSubmit: true })
    expect(t.statuses()).toEqual(['recovering', 'idle', 'following', 'idle'])
    expect(t.server.count('POST')).toBe(0)
    t.session.dispose()
  })

  it('stays shut through reads of the turn (running, then ended) until the other tab relays it [R-GATE-HOLD-TURN R-GATE-READS-KEEP-HOLD]', async () => {
    const { tab, t } = await idleWithAnotherTab()
    await tab.posting(true)
    t.push.updated('e1')
    await settle()
    t.server.answerRead(runningTurn({ executionId: 'e1', question: 'Theirs' }))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'following', activeExecutionId: 'e1' })
    t.push.updated('e1')
    await settle()
    t.server.answerRead(snapshot(finishedTurn('e1', 'Theirs', 'Done.')))
    await settle()
    // A read cannot tell for sure which recorded turn is that message's: the relay can.
    expect(t.session.getState()).toMatchObject({ status: 'following', activeExecutionId: null })
    await tab.relayEndedTurn('e1', 'Theirs', 'Done.')
    expect(t.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    expect(t.statuses()).toEqual(['recovering', 'idle', 'following', 'idle'])
    t.session.dispose()
  })

  it('posts its own message as posting, then as not taken up when the server refuses it [R-GATE-HOLD-NOT-TAKEN]', async () => {
    const { tab, t } = await idleWithAnotherTab()
    t.session.setDraft('Refused')
    const result = t.session.submit()
    expect(tab.posted).toEqual([
      { v: 1, tab: expect.any(String), kind: 'posting', thread: expect.any(String), active: true },
    ])
    await settle()
    t.server.failPost(403)
    expect(await result).toMatchObject({ outcome: 'failed', error: { code: 'forbidden' } })
    await settle()
    expect(tab.posted.map((m) => m.kind === 'posting' && m.active)).toEqual([true, false])
    t.session.dispose()
  })

  it('posts no "not taken up" once its turn began: the turn itself is relayed [R-GATE-HOLD-TURN]', async () => {
    const { tab, t } = await idleWithAnotherTab()
    t.session.setDraft('Taken')
    const result = t.session.submit()
    await settle()
    t.server.openStream().send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
    expect(await result).toMatchObject({ outcome: 'accepted' })
    await settle()
    expect(tab.posted.map((m) => m.kind)).toEqual(['posting', 'turn'])
    t.session.dispose()
  })
})

/** Lets the sessions settle and the channel deliver what a tab posted (a task later). */
async function delivered() {
  await settle()
  await nextTask()
  await settle()
}

/** Two tabs relayed to each other, idle after tab A's first turn streamed these events. */
async function twoTabsAfterATurn(...events: TurnEvent[]) {
  const browser = broadcastNetwork()
  const a = setup({ relay: relayIn(browser.tab()) })
  const b = setup({ relay: relayIn(browser.tab()) })
  a.server.answerRead(empty)
  b.server.answerRead(empty)
  await settle()
  a.session.setDraft('First')
  void a.session.submit()
  await delivered()
  const stream = a.server.openStream()
  stream.send(...events)
  stream.close()
  await delivered()
  return { a, b }
}

describe('the gate while another tab posts: records and relays that lag [R-GATE-READS-KEEP-HOLD]', () => {
  it('is not opened by reads, lagging or not: the record holds the gate while a turn runs, the hold until the turn is relayed', async () => {
    const tab = otherTab()
    const t = setup({ relay: tab.relay })
    t.server.answerRead(runningTurn({ executionId: 'e1', question: 'Before' }))
    await settle()
    await tab.posting(true)
    const read = async (answer: HistorySnapshot) => {
      t.push.updated('e1')
      await settle()
      t.server.answerRead(answer)
      await settle()
    }
    // Lagging records (e1, the turn before the message, running then ended), then the new turn.
    await read(runningTurn({ executionId: 'e1', question: 'Before' }))
    await read(snapshot(finishedTurn('e1', 'Before', 'Done.')))
    expect(t.session.getState()).toMatchObject({ status: 'following', canSubmit: false })
    const e2 = runningTurn({ executionId: 'e2', question: 'Next' }).messages
    await read(snapshot([...finishedTurn('e1', 'Before', 'Done.'), ...e2], 'e2'))
    expect(t.session.getState()).toMatchObject({ status: 'following', activeExecutionId: 'e2' })
    await read(
      snapshot([...finishedTurn('e1', 'Before', 'Done.'), ...finishedTurn('e2', 'Next', 'Ok.')]),
    )
    expect(t.session.getState()).toMatchObject({ status: 'following', activeExecutionId: null })
    await tab.relayEndedTurn('e2', 'Next', 'Ok.')
    expect(t.session.getState()).toMatchObject({ status: 'idle', activeExecutionId: null })
    expect(t.statuses()).toEqual(['recovering', 'following', 'idle'])
    t.session.dispose()
  })

  it('stays shut when a lagging record names the turn that just ended live as running, while the next message is on its way', async () => {
    const { a, b } = await twoTabsAfterATurn(
      { type: 'execution-started', executionId: 'e1', sessionId: 't1' },
      { type: 'text-delta', id: 't', delta: 'Answer' },
      { type: 'done' },
    )
    expect(b.session.getState().status).toBe('idle')
    // A sends its next message at once, and B hears of it (the relay's copy comes a task later: no
    // number of microtask rounds is sure to let it in); B's read of e1's last batch answers a
    // record that lags.
    a.session.setDraft('Second')
    void a.session.submit()
    await delivered()
    b.push.updated('e1')
    await settle()
    b.server.answerRead(runningTurn({ executionId: 'e1', question: 'First', text: 'Answer' }))
    await settle()
    b.session.setDraft('Mine')
    expect(b.session.getState()).toMatchObject({ status: 'following', canSubmit: false })
    expect(await b.session.submit()).toEqual({ outcome: 'busy' })
    expect(b.server.count('POST')).toBe(0)
    expect(b.statuses()).toEqual(['recovering', 'idle', 'following', 'idle', 'following'])
    a.session.dispose()
    b.session.dispose()
  })

  it('stays shut when the record shows the new turn ended before the relay brings it; opens when it comes', async () => {
    const { tab, t } = await idleWithAnotherTab()
    await tab.posting(true)
    t.push.updated('e1')
    await settle()
    t.server.answerRead(snapshot(finishedTurn('e1', 'Quick', 'Ok.')))
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'following' })
    await tab.relayEndedTurn('e1', 'Quick', 'Ok.')
    t.session.setDraft('Now mine')
    expect(t.session.getState()).toMatchObject({ status: 'idle', canSubmit: true })
    expect(t.statuses()).toEqual(['recovering', 'idle', 'following', 'idle'])
    t.session.dispose()
  })

  it('stays shut on the released protocol when the record names by its real id the turn this tab followed under a stand-in id [R-N8N-STAND-IN-READ]', async () => {
    // n8n 2.41: no execution-started; done names the execution.
    const { a, b } = await twoTabsAfterATurn(
      { type: 'text-delta', id: 't', delta: 'Answer' },
      { type: 'done', executionId: 'x1' },
    )
    expect(b.session.getEngineState().live?.executionId).toMatch(/^unannounced:/)
    a.session.setDraft('Second')
    void a.session.submit()
    await delivered() // B hears of it, a task later
    b.push.updated('x1')
    await settle()
    b.server.answerRead(snapshot(finishedTurn('x1', 'First', 'Answer')))
    await settle()
    expect(a.session.getState().status).toBe('submitting')
    expect(b.session.getState()).toMatchObject({ status: 'following', canSubmit: false })
    a.session.dispose()
    b.session.dispose()
  })

  it('stays shut when its first read, pending as the other tab posts, answers a record that lags', async () => {
    const browser = broadcastNetwork()
    const a = setup({ relay: relayIn(browser.tab()) })
    a.server.answerRead(empty)
    await settle()
    const b = setup({ relay: relayIn(browser.tab()) })
    await settle()
    a.session.setDraft('First')
    void a.session.submit()
    await delivered()
    a.server
      .openStream()
      .send(
        { type: 'execution-started', executionId: 'e1', sessionId: 't1' },
        { type: 'text-delta', id: 't', delta: 'Answer' },
        { type: 'done' },
      )
    await delivered()
    a.session.setDraft('Second')
    void a.session.submit()
    await delivered()
    b.server.answerRead(runningTurn({ executionId: 'e1', question: 'First', text: 'Answer' }))
    await settle()
    expect(a.session.getState().status).toBe('submitting')
    expect(b.session.getState()).toMatchObject({ status: 'following', canSubmit: false })
    a.session.dispose()
    b.session.dispose()
  })

  it('stays shut when this tab posted at the same moment and its own message is refused [R-GATE-HOLD-WHILE-POSTING]', async () => {
    const { tab, t } = await idleWithAnotherTab()
    t.session.setDraft('Mine')
    const mine = t.session.submit()
    await tab.posting(true)
    await settle()
    t.server.failPost(403)
    expect(await mine).toMatchObject({ outcome: 'failed' })
    await settle()
    t.server.answerRead(empty)
    await settle()
    // The other tab's message may still be taken: the gate waits for it.
    expect(t.session.getState()).toMatchObject({ status: 'following', draft: 'Mine' })
    t.session.dispose()
  })

  it('says nothing more when it goes quiet while its message is on its way (the stream stays open) [R-GATE-QUIET-POSTER]', async () => {
    const { tab, t } = await idleWithAnotherTab({ lingerMs: 0 })
    t.session.setDraft('Mine')
    void t.session.submit()
    await settle()
    t.unsubscribe()
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(t.session.getEngineState()).toMatchObject({ active: false, own: null })
    expect(t.server.postSignals()[0]?.aborted).toBe(false)
    const stream = t.server.openStream()
    stream.send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
    await settle()
    // Not "not taken up": the turn may well run; the other tabs learn of it from the record.
    expect(tab.posted).toEqual([
      { v: 1, tab: expect.any(String), kind: 'posting', thread: expect.any(String), active: true },
    ])
    t.session.dispose()
  })
})

describe('the gate while another tab posts, with a clock [R-GATE-HOLD-EXPIRES]', () => {
  useFakeTimersInEachTest()

  it('opens after submitTimeoutMs when the posting tab goes quiet (closed), after a read', async () => {
    const { tab, t } = await idleWithAnotherTab({ submitTimeoutMs: 1_000 })
    await tab.posting(true)
    await vi.advanceTimersByTimeAsync(999)
    expect(t.session.getState().status).toBe('following')
    expect(t.server.pendingReads()).toBe(0)
    await vi.advanceTimersByTimeAsync(1)
    await settle()
    expect(t.server.pendingReads()).toBe(1)
    t.server.answerRead(empty)
    await settle()
    expect(t.session.getState()).toMatchObject({ status: 'idle' })
    t.session.dispose()
  })
})
