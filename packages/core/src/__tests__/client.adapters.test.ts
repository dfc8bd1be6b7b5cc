import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  broadcastChannelRelay,
  createMinimalPreviewChatClient,
  createPreviewChatClient,
  PreviewChatError,
  ssePush,
  throttleState,
  websocketPush,
  type MinimalPreviewChatClientOptions,
  type PushListener,
  type PushMessage,
  type PushSource,
  type WebSocketLike,
} from '../index'
import { createScriptedServer, empty, key, settle } from './harness'
import { nextTask, webSocketWorld } from './world/webSocket'

/** Every WebSocket and BroadcastChannel the client opens while a test runs. */
function watchPlatform() {
  const world = webSocketWorld()
  const channels: string[] = []
  vi.stubGlobal('WebSocket', world.WebSocket)
  const Channel = globalThis.BroadcastChannel
  vi.stubGlobal(
    'BroadcastChannel',
    class extends Channel {
      constructor(name: string) {
        super(name)
        channels.push(name)
      }
    },
  )
  return {
    get sockets() {
      return world.sockets.map((socket) => socket.url)
    },
    channels,
  }
}

afterEach(() => {
  vi.unstubAllGlobals()
})

/** A client against a scripted server, its session started (subscribed) and its first read answered. */
async function started(
  create: typeof createMinimalPreviewChatClient,
  options: MinimalPreviewChatClientOptions = {},
) {
  const server = createScriptedServer()
  const client = create({
    baseUrl: 'http://test/rest',
    fetch: server.fetch,
    storage: null,
    lingerMs: 0,
    resumeSignal: () => () => {},
    ...options,
  })
  const session = client.session(key)
  const unsubscribe = session.subscribe(() => {})
  await settle()
  server.answerRead(empty)
  await settle()
  return { server, client, session, unsubscribe }
}

const pushReads = (server: ReturnType<typeof createScriptedServer>) =>
  server.requests.filter((request) => request.path.endsWith('/push'))

describe('createPreviewChatClient: the defaults work out of the box [R-PAY-FOR-USE]', () => {
  it('opens the WebSocket push on {baseUrl}/push and the BroadcastChannel relay of its scope, and throttles the view', async () => {
    const platform = watchPlatform()
    const { client, session, unsubscribe } = await started(createPreviewChatClient, {
      scope: 'alice',
    })
    expect(platform.sockets).toEqual(['ws://test/rest/push'])
    expect(platform.channels).toEqual(['preview-chat:alice'])
    // The view a UI reads is not the session's own store: deltas wait for the next frame.
    expect(client.view(session)).not.toBe(session.store)
    expect(client.view(session, 0)).toBe(session.store)
    unsubscribe()
  })

  it('with headers, pushes over SSE with them (a browser WebSocket cannot send headers)', async () => {
    const platform = watchPlatform()
    const { server, unsubscribe } = await started(createPreviewChatClient, {
      headers: { authorization: 'Bearer alice' },
      pushUrl: 'http://test/rest/push',
    })
    expect(platform.sockets).toEqual([])
    expect(pushReads(server)).toHaveLength(1)
    const init = server.fetch.mock.calls.find(([url]) => String(url).endsWith('/push'))?.[1]
    expect(init?.headers).toMatchObject({
      authorization: 'Bearer alice',
      accept: 'text/event-stream',
    })
    unsubscribe()
  })

  it('with headers and no pushUrl, SSE goes to {baseUrl}/push', async () => {
    watchPlatform()
    const { server, unsubscribe } = await started(createPreviewChatClient, {
      headers: { authorization: 'Bearer alice' },
    })
    expect(pushReads(server).map((request) => request.path)).toEqual(['/rest/push'])
    unsubscribe()
  })

  it('without a WebSocket and without headers there is no push channel: sessions poll', async () => {
    const platform = watchPlatform()
    vi.stubGlobal('WebSocket', undefined)
    const { server, unsubscribe } = await started(createPreviewChatClient)
    expect(platform.sockets).toEqual([])
    expect(pushReads(server)).toEqual([])
    unsubscribe()
  })

  it('false leaves a default out', async () => {
    const platform = watchPlatform()
    const { client, session, unsubscribe } = await started(createPreviewChatClient, {
      push: false,
      relay: false,
      throttle: false,
    })
    expect(platform).toEqual({ sockets: [], channels: [] })
    expect(client.view(session)).toBe(session.store)
    unsubscribe()
  })
})

describe('createMinimalPreviewChatClient: only what the app passes [R-PAY-FOR-USE]', () => {
  it('with no adapters opens no push channel and no relay, and the view is the session itself', async () => {
    const platform = watchPlatform()
    const { server, client, session, unsubscribe } = await started(createMinimalPreviewChatClient)
    expect(platform).toEqual({ sockets: [], channels: [] })
    expect(pushReads(server)).toEqual([])
    expect(client.view(session)).toBe(session.store)
    unsubscribe()
  })

  it('opens the adapters it is given, each on the client’s own URL, headers and scope', async () => {
    const platform = watchPlatform()
    const { server, client, session, unsubscribe } = await started(createMinimalPreviewChatClient, {
      scope: 'bob',
      headers: { authorization: 'Bearer bob' },
      credentials: 'include',
      push: ssePush(),
      relay: broadcastChannelRelay(),
      throttle: throttleState,
    })
    expect(platform.sockets).toEqual([])
    expect(platform.channels).toEqual(['preview-chat:bob'])
    expect(pushReads(server).map((request) => request.path)).toEqual(['/rest/push'])
    const init = server.fetch.mock.calls.find(([url]) => String(url).endsWith('/push'))?.[1]
    expect(init).toMatchObject({
      credentials: 'include',
      headers: { authorization: 'Bearer bob' },
    })
    expect(client.view(session)).not.toBe(session.store)
    unsubscribe()
  })

  it("a push that is no adapter (an earlier version's 'sse') is refused at once, saying what to pass [R-PAY-FOR-USE]", () => {
    for (const push of ['sse', 'websocket', { url: '/rest/push' }]) {
      const make = () =>
        createPreviewChatClient({ push: push as never, fetch: createScriptedServer().fetch })
      expect(make).toThrowError(PreviewChatError)
      expect(make).toThrowError('push must be ssePush(), websocketPush(), a PushSource or false')
    }
  })

  it('websocketPush() turns an https pushUrl into wss', async () => {
    const platform = watchPlatform()
    const { unsubscribe } = await started(createMinimalPreviewChatClient, {
      pushUrl: 'https://chat.example/rest/push?pushRef=r1',
      push: websocketPush(),
    })
    expect(platform.sockets).toEqual(['wss://chat.example/rest/push?pushRef=r1'])
    unsubscribe()
  })
})

describe('junk on the push channel is ignored, reported, and never stops it [R-PUSH-PARSED]', () => {
  const update = (threadId: string) => ({
    type: 'agentExecutionUpdated',
    data: { ...key, threadId, executionId: 'e1' },
  })

  it("from an app's own PushSource: values that are no push message warn and read nothing; the next good one reads", async () => {
    let listener: PushListener | undefined
    const source: PushSource = {
      subscribe: (given) => {
        listener = given
        return () => {}
      },
    }
    const warnings: string[] = []
    const { server, unsubscribe } = await started(createMinimalPreviewChatClient, {
      push: source,
      minReadIntervalMs: 0,
      onWarning: (message) => void warnings.push(message),
    })
    const junk: unknown[] = [
      null,
      42,
      'agentExecutionUpdated',
      { type: 'agentExecutionUpdated' },
      { type: 'agentExecutionUpdated', data: { ...key, executionId: 7 } },
      { type: 'agentExecutionUpdated', data: null },
    ]
    for (const value of junk) expect(() => listener?.onMessage(value as PushMessage)).not.toThrow()
    // Another kind of message on a channel that carries more than this feature's: not junk.
    listener?.onMessage({ type: 'workflowActivated' } as unknown as PushMessage)
    await settle()
    expect(server.pendingReads()).toBe(0)
    expect(warnings.length).toBeGreaterThan(0)
    expect(
      warnings.every((w) =>
        w.startsWith('Ignored a push message that is not of the wire contract'),
      ),
    ).toBe(true)
    listener?.onMessage(update(key.threadId) as PushMessage)
    await settle()
    expect(server.pendingReads()).toBe(1)
    unsubscribe()
  })

  it('from the built-in WebSocket channel: a frame that is not JSON or is malformed warns, and the channel goes on', async () => {
    const world = webSocketWorld({ handshake: 'open', latencyMs: 0 })
    const warnings: string[] = []
    const { server, unsubscribe } = await started(createMinimalPreviewChatClient, {
      push: websocketPush({ WebSocket: world.WebSocket as unknown as WebSocketLike }),
      minReadIntervalMs: 0,
      onWarning: (message) => void warnings.push(message),
    })
    const socket = world.sockets[0]!
    await nextTask()
    await settle()
    // The channel opened: a read follows a (re)connect; answer it before the frames come.
    expect(socket.readyState).toBe(world.WebSocket.OPEN)
    expect(server.pendingReads()).toBe(1)
    server.answerRead(empty)
    await settle()
    socket.serverSend('not json')
    socket.serverSend(JSON.stringify({ type: 'agentExecutionUpdated', data: {} }))
    await nextTask()
    await settle()
    expect(server.pendingReads()).toBe(0)
    expect(warnings).toHaveLength(2)
    socket.serverSend(JSON.stringify(update(key.threadId)))
    await nextTask()
    await settle()
    expect(server.pendingReads()).toBe(1)
    unsubscribe()
  })
})
