/**
 * The reducer assembled from the parts a client uses (issue 36): the tab relay is a part
 * (`relayPart`), which only a client with a relay carries. Without it the engine takes no relay
 * message and keeps no relay deadline; with it, what the other tabs say is taken as before, and
 * its deadlines are the scheduler's like any slice's. At the client: `createMinimalPreviewChatClient`
 * takes a relay as `tabRelay(…)` (which brings the part) and refuses a bare one, saying so.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
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
import { relayOf, relayPart, type RelayState } from '../engine/slices/relay'
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
    expect(relayOf(held).holds).toEqual({ other: 1_000 })
  })

  it('without the part, a relay message changes nothing, sets no alarm, and says the part is missing', () => {
    const before = idle()
    const step = withoutRelay(before, posting(1_000), config)
    expect(step.state).toBe(before)
    expect(step.commands).toEqual([
      {
        type: 'warn',
        message: expect.stringMatching(
          /^An action of type "relay-received" met no part of the engine that takes it\. The client lacks the part that takes it: for "relay-received", pass relay: tabRelay\(yourRelay\) to the client; .*#no-part$/,
        ),
      },
    ])
  })

  it('with it, another tab’s hold is taken, its expiry is the part’s deadline, and the tick at that time ends it with a read', () => {
    const at = 1_000
    const expiry = at + config.submitTimeoutMs
    const seen: { holds: RelayState['holds']; deadline: number | null }[] = []
    let state = idle()
    const take = (action: EngineAction) => {
      state = withRelay(state, action, config).state
      seen.push({ holds: relayOf(state).holds, deadline: nextDeadline(state, config, [relayPart]) })
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
    expect(relayOf(step.state).holds).toEqual({ other: 1_000 })
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

describe('each part keeps its state under its own key of the engine state [R-ENGINE-PARTS-OWN-STATE]', () => {
  it('without the relay part, the state has no relay key; with it, another tab’s hold is under `relay` and the gate reads one fact of it', () => {
    const plain = withoutRelay(idle(), posting(1_000), config).state
    expect(Object.hasOwn(plain, 'relay')).toBe(false)
    expect(plain.othersPosting).toBe(false)
    const held = withRelay(idle(), posting(1_000), config).state
    expect(relayOf(held)).toEqual({ following: null, syncAsked: null, holds: { other: 1_000 } })
    expect(held.othersPosting).toBe(true)
    // Going quiet forgets what the other tabs said, under the part's key too.
    const quiet = withRelay(held, { type: 'deactivated' }, config).state
    expect(relayOf(quiet).holds).toEqual({})
    expect(quiet.othersPosting).toBe(false)
  })

  it('no file of the engine, the session’s host or the client outside a part names that part’s state, actions or commands, and `EngineState` declares none of it', () => {
    const engine = join(__dirname, '../engine')
    // What names each part's state: its accessor and types, and the fields it had in the base.
    const parts = [
      {
        own: ['slices/relay.ts', 'slices/relayShapes.ts'],
        names:
          /\b(relayOf|RelayState|RelayingState|postingHolds|syncAsked|followsRelayed|followsRunning)\b/,
      },
      {
        own: ['slices/released.ts', 'slices/releasedShapes.ts'],
        names:
          /\b(silentOf|SilentTurn|ReleasedState|ReleasingState|standInBase|settledBase)\b|\.silent\b/,
      },
      { own: ['queue/'], names: /\b(queueOf|QueueState|QueuedState)\b/ },
    ]
    const files = [
      ...readdirSync(engine).filter((file) => file.endsWith('.ts')),
      ...readdirSync(join(engine, 'slices')).map((file) => join('slices', file)),
      ...readdirSync(join(engine, 'queue')).map((file) => join('queue', file)),
    ]
    let checked = 0
    for (const file of files) {
      const source = readFileSync(join(engine, file), 'utf8')
      for (const { own, names } of parts) {
        if (own.some((path) => file.startsWith(path))) continue
        checked++
        expect(source, `${file} names a part's state`).not.toMatch(names)
      }
    }
    expect(checked).toBeGreaterThan(40)
    // …nor its actions or commands: the engine's files, the session's host and the client.
    const src = join(__dirname, '..')
    const owned = [
      {
        own: [
          'engine/relay.ts',
          'engine/slices/relay.ts',
          'engine/slices/relayShapes.ts',
          'effects/tabRelay.ts',
        ],
        names: /'relay-received'|type: 'relay'|case 'relay'|=== 'relay'/,
      },
      { own: ['engine/queue/', 'effects/queueHost.ts', 'queue.ts'], names: /'queue-[a-z-]+'/ },
    ]
    const hosts = [
      ...files.map((file) => join('engine', file)),
      ...readdirSync(join(src, 'effects')).map((file) => join('effects', file)),
      'client.ts',
    ].filter((file) => file.endsWith('.ts'))
    for (const file of hosts) {
      const source = readFileSync(join(src, file), 'utf8')
      for (const { own, names } of owned) {
        if (own.some((path) => file.startsWith(path))) continue
        checked++
        expect(source, `${file} names a part's action or command`).not.toMatch(names)
      }
    }
    const model = readFileSync(join(engine, 'model.ts'), 'utf8')
    const declared = /export interface EngineState \{([\s\S]*?)\n\}/.exec(model)?.[1] ?? ''
    const keys = [...declared.matchAll(/^ {2}(\w+)\??:/gm)].map(([, name]) => name)
    expect(keys).toContain('othersPosting')
    for (const part of ['relay', 'released', 'queue', 'postingHolds', 'syncAsked', 'silent'])
      expect(keys).not.toContain(part)
  })
})

describe('the engine has no parameter for a part [R-ENGINE-PARTS-OWN-STATE]', () => {
  it('no slice of the engine declares a way of doing a step (a function type that returns a step) for a part to fill in, and none but the released part’s own file names its ways', () => {
    // A part that does a thing its own way asks the engine's routing questions (`takesRecord`,
    // `beginsUnannounced`, `unroutedRequest`, `unroutedFailure`) and wraps; the engine's
    // handlers take (state, action, config), no strategy. The one function type of a step the
    // slices keep is `andThen`'s sequence of steps.
    const engine = join(__dirname, '../engine')
    const parts = ['slices/released.ts', 'slices/relay.ts', 'relay.ts']
    const files = [
      ...readdirSync(engine).filter((file) => file.endsWith('.ts')),
      ...readdirSync(join(engine, 'slices')).map((file) => join('slices', file)),
    ].filter((file) => !parts.includes(file) && file !== 'model.ts')
    for (const file of files) {
      const source = readFileSync(join(engine, file), 'utf8').replace(
        'export function andThen(first: Step, ...next: ((state: EngineState) => Step)[]): Step',
        '',
      )
      expect(source, `${file} declares a step's strategy`).not.toMatch(/=>\s*Step\b/)
      expect(source, `${file} names the released part's ways`).not.toMatch(
        /\b(standInTurn|stopByClosing|Unannounced|CloseStop|RecordHook)\b/,
      )
    }
    expect(files.length).toBeGreaterThan(12)
  })
})

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
      const holds = [relayOf(second.session.getEngineState()).holds]
      first.server
        .openStream()
        .send({ type: 'execution-started', executionId: 'e1', sessionId: 't1' })
      await flush()
      holds.push(relayOf(second.session.getEngineState()).holds)
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
    expect(relayOf(second.session.getEngineState()).holds).toEqual({})
    expect(second.states).toEqual(['idle'])
    first.session.dispose()
    second.session.dispose()
  })
})
