/**
 * The reducer assembled from the parts a client uses (issue 36): the tab relay is a part
 * (`relayPart`), which only a client with a relay carries. Without it the engine takes no relay
 * message and keeps no relay deadline; with it, what the other tabs say is taken as before, and
 * its deadlines are the scheduler's like any slice's. At the client: `createMinimalPreviewChatClient`
 * takes a relay as `tabRelay(…)` (which brings the part) and refuses a bare one, saying so.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  broadcastChannelRelay,
  createMinimalPreviewChatClient,
  createPreviewChatClient,
  PreviewChatError,
  tabRelay,
  type TabRelay,
} from '../index'
import type { EngineAction, EngineState } from '../engine/model'
import { RELAY_VERSION } from '../engine/relay'
import { initialEngineState, reduce, reducerWith } from '../engine/reduce'
import { nextDeadline } from '../engine/schedule'
import { relayPart } from '../engine/slices/relay'
import { defaultTimers } from '../platform/environment'
import {
  createScriptedPush,
  createScriptedServer,
  empty,
  engineConfig,
  key,
  ownTurnActions,
  settle,
} from './harness'
import { broadcastNetwork } from './world/broadcastChannel'
import { storageOrigin } from './world/storage'
import { nextTask } from './world/webSocket'

afterEach(() => {
  vi.unstubAllGlobals()
})

const config = engineConfig
const withoutRelay = reducerWith()
const withRelay = reducerWith([relayPart])

/** A tab listened to, read, with nothing running. */
function idle(): EngineState {
  let state = initialEngineState({ key, tab: 'me' })
  for (const action of [
    { type: 'mounted', cached: { kind: 'none' }, at: 0, stampedAt: 0, random: 0 },
    { type: 'activated', at: 0, pushConnected: true },
  ] as EngineAction[])
    state = withRelay(state, action, config).state
  return state
}

/** Another tab of this thread says it posts (the relay's `posting`), at `at`. */
const posting = (at: number): EngineAction => ({
  type: 'relay-received',
  data: {
    v: RELAY_VERSION,
    tab: 'other',
    thread: JSON.stringify([key.projectId, key.agentId, key.threadId]),
    kind: 'posting',
    active: true,
  },
  at,
  stampedAt: at,
})

describe('the relay is a part of the engine: only a client with a relay carries it [R-RELAY-PART]', () => {
  it('the thread id the relay messages carry is the one this test writes', () => {
    const held = withRelay(idle(), posting(1_000), config).state
    expect(held.postingHolds).toEqual({ other: 1_000 })
  })

  it('without the part, a relay message changes nothing, sets no alarm, and says the part is missing', () => {
    const before = idle()
    const step = withoutRelay(before, posting(1_000), config)
    expect(step.state).toBe(before)
    expect(step.commands).toEqual([
      {
        type: 'warn',
        message: expect.stringMatching(
          /^A relay message met no relay part\. Pass relay: tabRelay\(yourRelay\) to the client\. .*#no-relay-part$/,
        ),
      },
    ])
  })

  it('with it, another tab’s hold is taken, its expiry is the part’s deadline, and the tick at that time ends it with a read', () => {
    const at = 1_000
    const expiry = at + config.submitTimeoutMs
    const seen: { holds: EngineState['postingHolds']; deadline: number | null }[] = []
    let state = idle()
    const take = (action: EngineAction) => {
      state = withRelay(state, action, config).state
      seen.push({ holds: state.postingHolds, deadline: nextDeadline(state, config, [relayPart]) })
    }
    take(posting(at))
    // The engine without the part does not see the hold's deadline: it is the part's.
    expect(nextDeadline(state, config)).toBeNull()
    take({ type: 'tick', at: expiry - 1 })
    const readsBefore = state.reads
    take({ type: 'tick', at: expiry })
    expect(seen).toEqual([
      { holds: { other: at }, deadline: expiry },
      { holds: { other: at }, deadline: expiry },
      { holds: {}, deadline: null },
    ])
    expect(state.reads).not.toEqual(readsBefore)
  })

  it('without the part, a whole turn of this tab’s own makes no relay command; with it, the other tabs are told each step of it', () => {
    const turn = ownTurnActions
    const commandsOf = (reducer: typeof withRelay) => {
      let state = idle()
      const commands = []
      for (const action of turn) {
        const done = reducer(state, action, config)
        state = done.state
        commands.push(...done.commands)
      }
      return { state, commands }
    }
    const without = commandsOf(withoutRelay)
    const withPart = commandsOf(withRelay)
    expect(without.commands.filter((command) => command.type === 'relay')).toEqual([])
    expect(without.commands.map((command) => command.type)).toContain('post')
    expect(without.state.recorded).toBe(empty)
    const thread = JSON.stringify([key.projectId, key.agentId, key.threadId])
    expect(withPart.commands.filter((command) => command.type === 'relay')).toEqual([
      {
        type: 'relay',
        message: { v: RELAY_VERSION, tab: 'me', thread, kind: 'posting', active: true },
      },
      {
        type: 'relay',
        message: expect.objectContaining({ tab: 'me', thread, kind: 'turn', seq: 0 }),
      },
      {
        type: 'relay',
        message: expect.objectContaining({ kind: 'events', executionId: 'e1', seq: 1 }),
      },
      {
        type: 'relay',
        message: expect.objectContaining({ kind: 'events', executionId: 'e1', seq: 2 }),
      },
      {
        type: 'relay',
        message: expect.objectContaining({
          kind: 'events',
          executionId: 'e1',
          seq: 3,
          events: [{ type: 'done' }],
        }),
      },
    ])
    // The part only tells: the rest of the turn is the same with it as without it.
    expect(withPart.commands.filter((command) => command.type !== 'relay')).toEqual(
      without.commands,
    )
    expect(withPart.state).toEqual(without.state)
  })

  it('`reduce` (what tests and a trace’s replay use) has every part', () => {
    const step = reduce(idle(), posting(1_000), config)
    expect(step.state.postingHolds).toEqual({ other: 1_000 })
  })
})

/** The tabs of one origin over a browser's BroadcastChannel (the stand-in of `world/`). */
function tabs() {
  const net = broadcastNetwork()
  const open = (relay: (channel: ReturnType<typeof net.tab>) => unknown) => {
    const channel = net.tab()
    vi.stubGlobal('BroadcastChannel', channel.BroadcastChannel)
    const server = createScriptedServer()
    const client = createMinimalPreviewChatClient({
      fetch: server.fetch,
      push: createScriptedPush().source,
      relay: relay(channel) as ReturnType<typeof tabRelay>,
      storage: storageOrigin().tab().sessionStorage, // this tab's own
      minReadIntervalMs: 0,
      resumeSignal: () => () => {},
    })
    const session = client.session(key)
    const states: string[] = []
    session.subscribe((state) => {
      if (states.at(-1) !== state.status) states.push(state.status)
    })
    vi.unstubAllGlobals()
    return { server, session, states }
  }
  return { open }
}

async function flush() {
  for (let hop = 0; hop < 3; hop++) {
    await settle()
    await nextTask()
  }
  await settle()
}

describe('createMinimalPreviewChatClient and a relay [R-RELAY-PART]', () => {
  it('refuses a bare TabRelay with a typed error that says to pass tabRelay(…)', () => {
    const bare: TabRelay = { post: () => {}, listen: () => () => {} }
    // @ts-expect-error -- the types say it first: a bare relay is not a `RelayWithPart`.
    const make = () => createMinimalPreviewChatClient({ relay: bare })
    expect(make).toThrow(PreviewChatError)
    expect(make).toThrow(/relay: tabRelay\(yourRelay\)/)
    expect(() => createMinimalPreviewChatClient({ relay: (() => bare) as never })).toThrow(
      PreviewChatError,
    )
  })

  it('createPreviewChatClient takes a bare TabRelay, as before (it wraps it itself)', () => {
    const bare: TabRelay = { post: () => {}, listen: () => () => {} }
    expect(() => createPreviewChatClient({ relay: bare }).dispose()).not.toThrow()
  })

  it.each([
    ['broadcastChannelRelay()', () => broadcastChannelRelay()],
    [
      'tabRelay(a TabRelay of the app’s own)',
      () => tabRelay(broadcastChannelRelay()({ scope: '', timers: defaultTimers, lingerMs: 0 })),
    ],
  ])(
    'with %s, a second tab holds while the first posts, and lets go when its turn begins [R-RELAY-PART]',
    async (_, relay) => {
      const origin = tabs()
      const first = origin.open(relay)
      const second = origin.open(relay)
      first.server.answerRead(empty)
      second.server.answerRead(empty)
      await flush()
      first.session.setDraft('Q')
      void first.session.submit()
      await flush()
      const holds = [second.session.getEngineState().postingHolds]
      first.server
        .openStream()
        .send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
      await flush()
      holds.push(second.session.getEngineState().postingHolds)
      expect(holds).toEqual([{ [first.session.getEngineState().tab]: expect.any(Number) }, {}])
      first.session.dispose()
      second.session.dispose()
    },
  )

  it('without a relay, a second tab knows nothing of the first’s POST (it follows by reads)', async () => {
    const origin = tabs()
    const first = origin.open(() => false)
    const second = origin.open(() => false)
    first.server.answerRead(empty)
    second.server.answerRead(empty)
    await flush()
    first.session.setDraft('Q')
    void first.session.submit()
    await flush()
    expect(second.session.getEngineState().postingHolds).toEqual({})
    expect(second.states).toEqual(['idle'])
    first.session.dispose()
    second.session.dispose()
  })
})
