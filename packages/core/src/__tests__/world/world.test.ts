/**
 * The stand-ins of `world/` behave as browsers do: each property a kinder fake lacked, shown.
 */
import { describe, expect, it } from 'vitest'
import { indexedDbQueueStore } from '../../effects/queueStore'
import {
  broadcastNetwork,
  browserOrigin,
  indexedDbWorld,
  itemsOf,
  lockOrigin,
  nextTask,
  storageOrigin,
  type StorageEventLike,
} from './index'

describe('the Storage stand-in', () => {
  it('tells the other tabs of the origin, a task later, never the writer; nothing for no change', async () => {
    const origin = storageOrigin()
    const [a, b, c] = [origin.tab(), origin.tab(), origin.tab()]
    const heard: string[] = []
    for (const [name, tab] of [
      ['a', a],
      ['b', b],
      ['c', c],
    ] as const)
      tab.window.addEventListener('storage', (event) => {
        const { key, oldValue, newValue } = event as StorageEventLike
        heard.push(`${name}: ${key} ${oldValue} → ${newValue}`)
      })
    a.localStorage.setItem('k', 'v1')
    a.localStorage.setItem('k', 'v1') // the same value: no event
    b.localStorage.removeItem('none') // no item: no event
    expect(heard).toEqual([])
    expect(c.localStorage.getItem('k')).toBe('v1') // read at once
    await nextTask()
    expect(heard).toEqual(['b: k null → v1', 'c: k null → v1'])
    c.close()
    b.localStorage.clear()
    await nextTask()
    expect(heard.slice(2)).toEqual(['a: null null → null'])
    expect(() => c.localStorage.getItem('k')).toThrow(/closed/)
  })

  it('throws a QuotaExceededError past its quota and keeps what it had; values are strings', () => {
    const tab = storageOrigin({ quota: 10 }).tab()
    tab.localStorage.setItem('n', 1 as unknown as string)
    expect(tab.localStorage.getItem('n')).toBe('1')
    expect(() => tab.localStorage.setItem('draft', 'far too long')).toThrow(
      expect.objectContaining({ name: 'QuotaExceededError' }),
    )
    expect([tab.localStorage.length, tab.localStorage.getItem('draft')]).toEqual([1, null])
  })

  it("keeps a tab's sessionStorage to that tab: no other tab reads it or hears of it; quota too", async () => {
    const origin = storageOrigin({ quota: 10 })
    const [a, b] = [origin.tab(), origin.tab()]
    const heard: unknown[] = []
    b.window.addEventListener('storage', (event) => heard.push(event))
    a.sessionStorage.setItem('d', 'mine')
    expect([b.sessionStorage.getItem('d'), a.localStorage.getItem('d')]).toEqual([null, null])
    expect(itemsOf(a.sessionStorage)).toEqual(new Map([['d', 'mine']]))
    expect(() => a.sessionStorage.setItem('draft', 'far too long')).toThrow(
      expect.objectContaining({ name: 'QuotaExceededError' }),
    )
    await nextTask()
    expect(heard).toEqual([])
    a.close()
    expect(() => a.sessionStorage.getItem('d')).toThrow(/closed/)
  })
})

describe('the BroadcastChannel stand-in', () => {
  it('delivers a copy to the other channels of the name, later, never to the sender', async () => {
    const net = broadcastNetwork()
    const [A, B] = [net.tab(), net.tab()]
    const sender = new A.BroadcastChannel('q')
    const sameTab = new A.BroadcastChannel('q')
    const other = new B.BroadcastChannel('q')
    const elsewhere = new B.BroadcastChannel('other')
    const got: [string, unknown][] = []
    sender.onmessage = (event) => got.push(['sender', event.data])
    sameTab.onmessage = (event) => got.push(['same tab', event.data])
    other.addEventListener('message', (event) =>
      got.push(['other tab', (event as MessageEvent).data]),
    )
    elsewhere.onmessage = (event) => got.push(['elsewhere', event.data])
    const message = { items: [1] }
    sender.postMessage(message)
    message.items.push(2) // after posting: not seen
    expect(got).toEqual([])
    await nextTask()
    expect(got).toEqual([
      ['same tab', { items: [1] }],
      ['other tab', { items: [1] }],
    ])
    expect(got[0]![1]).not.toBe(got[1]![1])
    expect(() => sender.postMessage(() => {})).toThrow(
      expect.objectContaining({ name: 'DataCloneError' }),
    )
  })

  it('a closed channel throws InvalidStateError on post; a closed tab receives nothing on its way', async () => {
    const net = broadcastNetwork()
    const [A, B] = [net.tab(), net.tab()]
    const a = new A.BroadcastChannel('q')
    const b = new B.BroadcastChannel('q')
    const got: unknown[] = []
    b.onmessage = (event) => got.push(event.data)
    a.postMessage('on its way')
    B.close()
    await nextTask()
    expect(got).toEqual([])
    a.close()
    expect(() => a.postMessage('x')).toThrow(expect.objectContaining({ name: 'InvalidStateError' }))
  })
})

describe('the Web Locks stand-in', () => {
  it('grants an exclusive lock to one tab at a time, in order, released when the callback settles', async () => {
    const origin = lockOrigin()
    const [a, b] = [origin.tab(), origin.tab()]
    const log: string[] = []
    let release!: () => void
    const first = a.locks.request('sender', async (lock) => {
      log.push(`a holds ${lock?.mode}`)
      await new Promise<void>((resolve) => (release = resolve))
      log.push('a lets go')
      return 'a done'
    })
    const second = b.locks.request('sender', (lock) => void log.push(`b holds ${lock?.name}`))
    const tried = b.locks.request('sender', { ifAvailable: true }, (lock) =>
      log.push(`b tried: ${lock}`),
    )
    await nextTask()
    expect(log).toEqual(['a holds exclusive', 'b tried: null'])
    expect((await b.locks.query()).pending).toEqual([
      { name: 'sender', mode: 'exclusive', clientId: b.id },
    ])
    release()
    await expect(first).resolves.toBe('a done')
    await second
    await tried
    expect(log).toEqual(['a holds exclusive', 'b tried: null', 'a lets go', 'b holds sender'])
  })

  it('a tab that closes releases its lock (its callback never settled); an aborted wait rejects', async () => {
    const origin = lockOrigin()
    const [a, b, c] = [origin.tab(), origin.tab(), origin.tab()]
    const log: string[] = []
    void a.locks.request('sender', () => new Promise(() => log.push('a holds, for ever')))
    const abort = new AbortController()
    const waiting = c.locks.request('sender', { signal: abort.signal }, () => log.push('c holds'))
    const next = b.locks.request('sender', () => log.push('b holds'))
    await nextTask()
    abort.abort(new DOMException('gave up', 'AbortError'))
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' })
    expect(log).toEqual(['a holds, for ever'])
    a.close()
    await next
    expect(log).toEqual(['a holds, for ever', 'b holds'])
    await expect(
      b.locks.request('x', { steal: true, ifAvailable: true }, () => {}),
    ).rejects.toMatchObject({ name: 'NotSupportedError' })
  })

  it('shared locks are held together; steal takes it from the holders', async () => {
    const origin = lockOrigin()
    const [a, b] = [origin.tab(), origin.tab()]
    const holding: string[] = []
    const forever = () => new Promise(() => {})
    const stolen = a.locks.request('r', { mode: 'shared' }, () => (holding.push('a'), forever()))
    const alsoStolen = b.locks.request(
      'r',
      { mode: 'shared' },
      () => (holding.push('b'), forever()),
    )
    await nextTask()
    expect(holding).toEqual(['a', 'b'])
    await b.locks.request('r', { steal: true }, () => holding.push('b stole'))
    await expect(stolen).rejects.toMatchObject({ name: 'AbortError' })
    await expect(alsoStolen).rejects.toMatchObject({ name: 'AbortError' })
    expect(holding).toEqual(['a', 'b', 'b stole'])
  })
})

describe('the IndexedDB stand-in', () => {
  it('can refuse open at once (a SecurityError thrown) or with an error event', async () => {
    const idb = indexedDbWorld()
    idb.refuseOpen('throw')
    expect(() => idb.indexedDB.open('db')).toThrow(
      expect.objectContaining({ name: 'SecurityError' }),
    )
    idb.refuseOpen('error')
    const request = idb.indexedDB.open('db')
    const events: string[] = []
    request.onsuccess = () => events.push('success')
    request.onerror = () => events.push(`error ${request.error?.name}`)
    expect(events).toEqual([])
    await nextTask()
    expect(events).toEqual(['error InvalidStateError'])
    expect(() => request.result).toThrow(expect.objectContaining({ name: 'InvalidStateError' }))
    expect(idb.opens()).toBe(2)
  })

  it('opens again once allowed; a write can abort with QuotaExceededError and keeps nothing', async () => {
    const idb = indexedDbWorld()
    const store = indexedDbQueueStore(idb.indexedDB)
    await store.update('k', () => 'kept')
    idb.failWrites(1)
    await expect(store.update('k', () => 'lost')).rejects.toMatchObject({
      name: 'QuotaExceededError',
    })
    expect(await store.read('k')).toBe('kept')
    await store.update('k', () => 'written')
    expect(await store.read('k')).toBe('written')
  })
})

describe('browserOrigin: tabs of one origin', () => {
  it('a tab that closes says pagehide, closes its channels, releases its locks; its storage stays', async () => {
    const origin = browserOrigin()
    const [a, b] = [origin.openTab(), origin.openTab()]
    const log: string[] = []
    a.window.addEventListener('pagehide', () => log.push('a: pagehide'))
    const channel = new a.BroadcastChannel('q')
    void a.locks.request('sender', () => new Promise(() => {}))
    a.localStorage.setItem('draft', 'Hello')
    a.close()
    expect(() => channel.postMessage('x')).toThrow(
      expect.objectContaining({ name: 'InvalidStateError' }),
    )
    await b.locks.request('sender', { ifAvailable: true }, (lock) => log.push(`b: ${lock?.name}`))
    expect(log).toEqual(['a: pagehide', 'b: sender'])
    expect(b.localStorage.getItem('draft')).toBe('Hello')
    expect([a.closed, b.closed]).toEqual([true, false])
  })
})
