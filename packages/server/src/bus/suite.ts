/**
 * The bus's contract, as a test suite any implementation runs (`describeBusSuite('redis', …)`):
 * `makeBuses(n)` gives n buses of one deployment (n mains), fresh for each test. Delivery may be
 * asynchronous, so a test waits for what must arrive, and shows what must not by a later message
 * that arrives first in its place.
 */
import type { ServerPushMessage } from '@preview-chat/core/contract'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PreviewChatBus } from './types'

/** What `makeBuses` gives: the buses, and how to release what they hold. */
export interface BusFixture {
  buses: PreviewChatBus[]
  close(): Promise<void>
}

const update = (executionId: string): ServerPushMessage => ({
  type: 'agentExecutionUpdated',
  data: { projectId: 'p', agentId: 'a', threadId: 't', executionId },
})

/** Collects what a user's subscription hears. */
function hear(bus: PreviewChatBus, userId: string) {
  const heard: string[] = []
  const unsubscribe = bus.subscribe(userId, (message) => {
    heard.push(message.type === 'agentExecutionUpdated' ? message.data.executionId : message.type)
  })
  return { heard, unsubscribe }
}

/** `n` buses of one deployment (2 or 3; the third is the second when 2 are asked). */
type Buses = (n: 2 | 3) => Promise<[PreviewChatBus, PreviewChatBus, PreviewChatBus]>

const arrived = (heard: string[], expected: string[]) =>
  vi.waitFor(() => expect(heard).toEqual(expected), { timeout: 5000, interval: 5 })

export function describeBusSuite(
  name: string,
  makeBuses: (n: number) => Promise<BusFixture>,
): void {
  describe(`the bus contract: ${name} [R-SERVER-BUS]`, () => {
    let fixture: BusFixture | undefined
    const buses: Buses = async (n) => {
      fixture = await makeBuses(n)
      const [a, b, c] = fixture.buses
      if (!a || !b || (n > 2 && !c)) throw new Error(`makeBuses(${n}) gave fewer buses`)
      return [a, b, c ?? b]
    }
    afterEach(async () => {
      await fixture?.close()
      fixture = undefined
    })
    describePush(buses)
    describeStops(buses)
  })
}

function describePush(buses: Buses): void {
  it('a publish on one main reaches the user on every main, in order', async () => {
    const [a, b, c] = await buses(3)
    const tabs = [hear(a, 'alice'), hear(b, 'alice'), hear(c, 'alice')]
    await a.publish('alice', update('e1'))
    await a.publish('alice', update('e2'))
    for (const tab of tabs) await arrived(tab.heard, ['e1', 'e2'])
  })

  it('never reaches another user [R-SERVER-PUSH-SCOPE]', async () => {
    const [a, b] = await buses(2)
    const bob = hear(b, 'bob')
    await a.publish('alice', update('alice-only'))
    await a.publish('bob', update('for-bob'))
    await arrived(bob.heard, ['for-bob'])
  })

  it('an unsubscribed listener hears nothing more; the others still do', async () => {
    const [a, b] = await buses(2)
    const gone = hear(b, 'alice')
    const stays = hear(b, 'alice')
    await a.publish('alice', update('e1'))
    await arrived(gone.heard, ['e1'])
    gone.unsubscribe()
    await a.publish('alice', update('e2'))
    await arrived(stays.heard, ['e1', 'e2'])
    expect(gone.heard).toEqual(['e1'])
  })

  it('a listener that throws does not keep the message from the others', async () => {
    const [a, b] = await buses(2)
    b.subscribe('alice', () => {
      throw new Error('a broken connection')
    })
    const tab = hear(b, 'alice')
    await a.publish('alice', update('e1'))
    await arrived(tab.heard, ['e1'])
  })

  it('carries the next-era queue updates as they are', async () => {
    const [a, b] = await buses(2)
    const received: ServerPushMessage[] = []
    b.subscribe('alice', (message) => received.push(message))
    const message: ServerPushMessage = {
      type: 'agentMessageQueueUpdated',
      data: { projectId: 'p', agentId: 'a', threadId: 't' },
    }
    await a.publish('alice', message)
    await vi.waitFor(() => expect(received).toEqual([message]), { timeout: 5000, interval: 5 })
  })
}

function describeStops(buses: Buses): void {
  it('a cancel reaches the registered main wherever it is, with its answer [R-SERVER-STOP-RELAY]', async () => {
    const [a, b] = await buses(2)
    const asked: string[] = []
    a.register('main-a', (executionId) => {
      asked.push(executionId)
      return executionId === 'e-running'
    })
    expect(await b.cancel('main-a', 'e-running')).toBe(true)
    expect(await b.cancel('main-a', 'e-ended')).toBe(false)
    expect(await a.cancel('main-a', 'e-running')).toBe(true)
    expect(asked).toEqual(['e-running', 'e-ended', 'e-running'])
  })

  it('an asynchronous handler is awaited', async () => {
    const [a, b] = await buses(2)
    a.register('main-a', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      return true
    })
    expect(await b.cancel('main-a', 'e1')).toBe(true)
  })

  it('two quick cancels of different executions both land', async () => {
    const [a, b] = await buses(2)
    const asked: string[] = []
    a.register('main-a', (executionId) => (asked.push(executionId), true))
    expect(await Promise.all([b.cancel('main-a', 'e1'), b.cancel('main-a', 'e2')])).toEqual([
      true,
      true,
    ])
    expect(asked.toSorted()).toEqual(['e1', 'e2'])
  })

  it('an unknown main answers false, and the Stop is not remembered for a later one', async () => {
    const [a, b] = await buses(2)
    expect(await b.cancel('main-late', 'e1')).toBe(false)
    const asked: string[] = []
    a.register('main-late', (executionId) => (asked.push(executionId), true))
    expect(await b.cancel('main-late', 'e2')).toBe(true)
    expect(asked).toEqual(['e2'])
  })

  it('an unregistered main answers false; unregistering a replaced handler keeps the new one', async () => {
    const [a, b] = await buses(2)
    const unregisterFirst = a.register('main-a', () => true)
    unregisterFirst()
    expect(await b.cancel('main-a', 'e1')).toBe(false)
    const unregisterOld = a.register('main-a', () => true)
    const asked: string[] = []
    a.register('main-a', (executionId) => (asked.push(executionId), true))
    unregisterOld()
    expect(await b.cancel('main-a', 'e2')).toBe(true)
    expect(asked).toEqual(['e2'])
  })

  it('each main hears only the cancels of its own id', async () => {
    const [a, b, c] = await buses(3)
    const heardA: string[] = []
    const heardB: string[] = []
    a.register('main-a', (executionId) => (heardA.push(executionId), true))
    b.register('main-b', (executionId) => (heardB.push(executionId), true))
    expect(await c.cancel('main-b', 'e1')).toBe(true)
    expect(heardA).toEqual([])
    expect(heardB).toEqual(['e1'])
  })
}
