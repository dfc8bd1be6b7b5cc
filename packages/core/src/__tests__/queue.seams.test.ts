/**
 * The queue's seams are the queue's (issue 36): it calls its routes through the transport's one
 * generic request (`call`, with the thread's path from `threadPath`), it hears its push message
 * from the channel that hands every message to every listener unchecked (each reads its own
 * type), and it reads its capability token (`message-queue`) from the tokens the actions carry as
 * data. A client without the queue carries none of it (`pnpm check:size` proves the bundle side);
 * here, the behaviour: against the reference backend's next-era flavor in process, with a push
 * source the test drives.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createPreviewChatBackend, type PreviewChatBackend } from '../../../server/src/index'
import { createMinimalPreviewChatClient, type PushListener, type PushSource } from '../index'
import { documentLocks } from '../effects/queueHost'
import type { EngineAction } from '../engine/model'
import { initialEngineState, reducerWith } from '../engine/reduce'
import { queuePart } from '../engine/queue/reduce'
import { queueOf } from '../engine/queue/state'
import { memoryQueueStore, queue } from '../queue'
import { engineConfig, key } from './harness'
import { storageOrigin } from './world/storage'
import { until } from './queueWorld'

let backend: PreviewChatBackend | null = null
afterEach(() => {
  backend?.close()
  backend = null
})

/** Some turns of the event loop: what a push set off has gone out, or nothing did. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 2))
}

/** A client of the backend (every request kept), with a push source the test hands messages to. */
function world(withQueue: boolean) {
  backend = createPreviewChatBackend({
    dev: true,
    flavor: 'next-era',
    deltaMs: 0,
    snapshotMs: 5,
    sleep: async () => {},
  })
  const server = backend
  const requests: Request[] = []
  let listener: PushListener | undefined
  const push: PushSource = {
    subscribe(given) {
      listener = given
      // Connected a moment later, as a socket's open event comes, never inside subscribe().
      setTimeout(() => listener === given && given.onConnectionChange?.(true), 1)
      return () => (listener = undefined)
    },
  }
  const warnings: string[] = []
  const client = createMinimalPreviewChatClient({
    headers: { Authorization: 'Bearer alice' },
    credentials: 'include',
    fetch: (input, init) => {
      const request = new Request(new URL(String(input), 'http://x'), init)
      requests.push(request)
      return server.fetch(request.clone())
    },
    push,
    storage: storageOrigin().tab().sessionStorage, // the tab's own: drafts kept, as in a browser
    lingerMs: 0,
    minReadIntervalMs: 0,
    onWarning: (message) => void warnings.push(message),
    ...(withQueue && { queue: queue({ store: memoryQueueStore(), locks: documentLocks() }) }),
  })
  const threadId = crypto.randomUUID()
  const session = client.session({ projectId: 'p', agentId: 'a', threadId, isNew: true })
  const stop = session.subscribe(() => {})
  const thread = `/rest/projects/p/agents/v2/a/chat/${threadId}`
  const gets = (path: string) =>
    requests.filter((r) => r.method === 'GET' && new URL(r.url).pathname === thread + path)
  return {
    session,
    warnings,
    threadId,
    /** Hands `message` to the client as the channel would: unchecked. */
    hear: (message: unknown) => listener?.onMessage(message),
    queueReads: () => gets('/queue'),
    historyReads: () => gets('/messages'),
    close: () => {
      stop()
      client.dispose()
    },
  }
}

const queuePush = (
  threadId: string,
  data: object = { projectId: 'p', agentId: 'a', threadId },
) => ({
  type: 'agentMessageQueueUpdated',
  data,
})

describe('the queue brings its own seams: its routes, its push, its capability [R-QUEUE-SEAMS]', () => {
  it("reads the server's queue through the client's own request (its path, headers, credentials), and again on its push of this thread only", async () => {
    const w = world(true)
    expect(await w.session.submit('hello')).toMatchObject({ outcome: 'accepted' })
    await until(() => w.session.getState().status === 'idle')
    // The turn's answer named `message-queue` (its header): the queue reads the server's queue.
    await until(() => w.queueReads().length > 0)
    await settle()
    for (const read of w.queueReads()) {
      expect(read.headers.get('authorization')).toBe('Bearer alice')
      expect(read.credentials).toBe('include')
    }
    const reads = w.queueReads().length

    // Another thread's queue changed: nothing to read.
    w.hear(queuePush('another thread'))
    await settle()
    expect(w.queueReads()).toHaveLength(reads)
    // This thread's: read again, through the same request.
    w.hear(queuePush(w.threadId))
    await until(() => w.queueReads().length === reads + 1)
    expect(w.queueReads().at(-1)?.headers.get('authorization')).toBe('Bearer alice')

    // The session reads its own type from the same channel (the queue's reader ignores it).
    const historyReads = w.historyReads().length
    w.hear({
      type: 'agentExecutionUpdated',
      data: { projectId: 'p', agentId: 'a', threadId: w.threadId, executionId: 'e' },
    })
    await until(() => w.historyReads().length > historyReads)

    // A queue push that is malformed is the queue's to report: once, and nothing is read.
    await settle()
    const after = w.queueReads().length
    w.hear(queuePush(w.threadId, {}))
    await settle()
    expect(w.queueReads()).toHaveLength(after)
    expect(w.warnings.filter((m) => m.includes('agentMessageQueueUpdated'))).toHaveLength(1)
    w.close()
  })

  it('a client without queue() reads nothing of the queue push and warns nothing of it', async () => {
    const w = world(false)
    expect(await w.session.submit('hello')).toMatchObject({ outcome: 'accepted' })
    await until(() => w.session.getState().status === 'idle')
    await settle()
    w.hear(queuePush(w.threadId))
    w.hear(queuePush(w.threadId, {}))
    await settle()
    expect(w.queueReads()).toHaveLength(0)
    expect(w.warnings).toEqual([])
    expect(w.session.getState().queue).toBeUndefined()
    w.close()
  })

  it("the capabilities are the header's tokens, as data: the engine reads message-dedupe, the queue message-queue", () => {
    const heard = (...capabilities: string[]): EngineAction => ({
      type: 'capabilities-heard',
      capabilities,
    })
    const start = initialEngineState({ key, tab: 'A' })
    const base = reducerWith()
    const queued = reducerWith([queuePart])
    const attached = queued(
      queued(start, { type: 'activated', at: 0, pushConnected: true }, engineConfig).state,
      { type: 'queue-attached', stored: null, kept: true, whenStopped: 'keep', at: 0 },
      engineConfig,
    ).state

    expect(base(start, heard('message-dedupe'), engineConfig).state.dedupesMessages).toBe(true)
    // A token the engine does not know is data it leaves alone: no queue without the queue.
    const unknown = base(start, heard('message-queue', 'something-new'), engineConfig).state
    expect(unknown.dedupesMessages).toBe(false)
    expect(queueOf(unknown)).toBeUndefined()

    const told = queued(attached, heard('message-queue'), engineConfig).state
    expect(queueOf(told)?.view.serverQueue).toBe(true)
    expect(
      queueOf(queued(attached, heard('message-dedupe'), engineConfig).state)?.view.serverQueue,
    ).not.toBe(true)
  })
})
