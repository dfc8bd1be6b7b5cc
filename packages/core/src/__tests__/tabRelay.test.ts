import { afterEach, describe, expect, it, vi } from 'vitest'
import { broadcastChannelRelay, createPreviewChatClient } from '../index'
import type { RelayMessage } from '../engine/relay'
import {
  assistantMessage,
  createScriptedPush,
  createScriptedServer,
  empty,
  key,
  settle,
  snapshot,
  userMessage,
} from './harness'
import { broadcastNetwork } from './world/broadcastChannel'
import { nextTask } from './world/webSocket'

afterEach(() => {
  vi.unstubAllGlobals()
})

/**
 * The tabs of one origin over a browser's BroadcastChannel (the stand-in: each message a task
 * later, a copy): `relay()` is the client's own `broadcastChannelRelay()`, bound to a new tab's
 * channel while that tab's session opens it.
 */
function origin() {
  const net = broadcastNetwork()
  return {
    relay: () => net.tab(),
    /** What the tabs posted on the relay's channel, in order. */
    posted: () => net.posted.map((m) => m.data as RelayMessage),
  }
}

/** Settles the sessions and lets the channel's messages (and the answers they draw) arrive. */
async function flush() {
  for (let hop = 0; hop < 3; hop++) {
    await settle()
    await nextTask()
  }
  await settle()
}

function tab(channels: ReturnType<ReturnType<typeof origin>['relay']> | false) {
  if (channels) vi.stubGlobal('BroadcastChannel', channels.BroadcastChannel)
  const server = createScriptedServer()
  const push = createScriptedPush()
  const client = createPreviewChatClient({
    fetch: server.fetch,
    push: push.source,
    relay: channels ? broadcastChannelRelay() : false,
    storage: null,
    minReadIntervalMs: 0,
    resumeSignal: () => () => {},
  })
  const session = client.session(key)
  const texts: string[] = []
  session.subscribe((state) => {
    const answer = state.messages.find((m) => m.id === 'e1:assistant')?.content[0]
    const text = answer?.type === 'text' ? answer.text : ''
    if (texts.at(-1) !== text) texts.push(text)
  })
  vi.unstubAllGlobals()
  return { server, push, session, texts }
}

describe('broadcastChannelRelay() on a browser’s BroadcastChannel', () => {
  it('a post with nobody listening in its tab still reaches the other tabs, and closes its channel after the linger [R-GATE-POSTING]', async () => {
    const net = broadcastNetwork()
    const [sender, receiver] = [net.tab(), net.tab()]
    const timers = { setTimeout, clearTimeout, now: () => Date.now() }
    const make = (channels: typeof sender) => {
      vi.stubGlobal('BroadcastChannel', channels.BroadcastChannel)
      return broadcastChannelRelay()({ scope: 's', timers, lingerMs: 0 })
    }
    const heard: unknown[] = []
    make(receiver).listen((data) => heard.push(data))
    const relay = make(sender)
    vi.stubGlobal('BroadcastChannel', sender.BroadcastChannel)
    // The sender's tab listens to nothing: a session that submits before anyone subscribed.
    relay.post({ v: 1, tab: 'A', thread: 't', kind: 'posting', active: true } as RelayMessage)
    await nextTask()
    await nextTask()
    expect(heard).toEqual([{ v: 1, tab: 'A', thread: 't', kind: 'posting', active: true }])
    expect(net.posted).toHaveLength(1)
    // Opened for the post only: closed once its linger passed, as after a listener leaves.
    expect(sender.open()).toEqual([])
    expect(receiver.open()).toHaveLength(1)
  })
})

describe('other tabs follow live (BroadcastChannel relay)', () => {
  it('a second tab follows the first tab’s turn token by token, then the record replaces it [R-TABS-LIVE R-READ-REPLACES]', async () => {
    const tabs = origin()
    const first = tab(tabs.relay())
    const second = tab(tabs.relay())
    first.server.answerRead(empty)
    second.server.answerRead(empty)
    await flush()
    first.session.setDraft('Q')
    void first.session.submit()
    await flush()
    const stream = first.server.openStream()
    stream.send(
      { type: 'execution-started', executionId: 'e1', sessionId: 't1' },
      { type: 'text-start', id: 't' },
    )
    await flush()
    for (const delta of ['a', 'b', 'c']) {
      stream.send({ type: 'text-delta', id: 't', delta })
      await flush()
    }
    expect(second.session.getState()).toMatchObject({
      status: 'following',
      activeExecutionId: 'e1',
    })
    expect(second.texts).toEqual(['', 'a', 'ab', 'abc'])
    expect(second.session.getState().messages).toEqual(first.session.getState().messages)
    // It sent nothing for it: no read, no POST.
    expect(second.server.requests.map((r) => r.method)).toEqual(['GET'])

    stream.send({ type: 'done' })
    stream.close()
    await flush()
    second.push.updated('e1')
    await flush()
    const recorded = snapshot([
      userMessage('e1', 'Q'),
      assistantMessage('e1', [{ type: 'text', text: 'abc' }]),
    ])
    second.server.answerRead(recorded)
    await flush()
    expect(second.session.getState()).toMatchObject({ status: 'idle', messages: recorded.messages })
    first.session.dispose()
    second.session.dispose()
  })

  it('a tab that joins mid-turn asks for the whole turn and continues from there [R-TABS-JOIN]', async () => {
    const tabs = origin()
    const first = tab(tabs.relay())
    first.server.answerRead(empty)
    await flush()
    first.session.setDraft('Q')
    void first.session.submit()
    await flush()
    const stream = first.server.openStream()
    stream.send(
      { type: 'execution-started', executionId: 'e1', sessionId: 't1' },
      { type: 'text-delta', id: 't', delta: 'early ' },
    )
    await flush()

    const late = tab(tabs.relay())
    late.server.answerRead(
      snapshot([userMessage('e1', 'Q', 'running'), assistantMessage('e1', [], 'running')], 'e1'),
    )
    await flush()
    stream.send({ type: 'text-delta', id: 't', delta: 'late' })
    await flush()
    expect(tabs.posted().filter((m) => m.kind === 'sync')).toHaveLength(1)
    expect(late.session.getState().messages[1]?.content).toEqual([
      { type: 'text', text: 'early late' },
    ])
    stream.send({ type: 'text-delta', id: 't', delta: '!' })
    await flush()
    expect(late.session.getState().messages[1]?.content).toEqual([
      { type: 'text', text: 'early late!' },
    ])
    first.session.dispose()
    late.session.dispose()
  })

  it('without a relay the second tab converges through reads alone [R-TABS-NO-RELAY]', async () => {
    const second = tab(false)
    second.server.answerRead(
      snapshot(
        [
          userMessage('e1', 'Q', 'running'),
          assistantMessage('e1', [{ type: 'text', text: 'ab' }], 'running'),
        ],
        'e1',
      ),
    )
    await settle()
    expect(second.session.getState()).toMatchObject({ status: 'following' })
    second.session.dispose()
  })
})
