/**
 * The queue's stores (issue 29): IndexedDB (through `fake-indexeddb`, a full implementation of the
 * API in memory) and this document's memory. What the queue needs of them: a read-modify-write
 * whose read and write no other change comes between, changes told to every watcher, and a
 * change's callback run in a later task than the call (the reducer's dispatch inside it must not
 * be nested in the step that asked for it).
 */
import { IDBFactory } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { indexedDbQueueStore, memoryQueueStore, type QueueStore } from '../effects/queueStore'

const stores: [string, () => [QueueStore, QueueStore]][] = [
  [
    'IndexedDB',
    () => {
      // Two tabs: two stores over one database.
      const factory = new IDBFactory()
      return [indexedDbQueueStore(factory), indexedDbQueueStore(factory)]
    },
  ],
  [
    'memory',
    () => {
      const store = memoryQueueStore()
      return [store, store]
    },
  ],
]

describe.each(stores)('the %s queue store [R-QUEUE-CLIENT-DURABLE]', (_, make) => {
  it('loses no change of two writers incrementing one key at once', async () => {
    const [a, b] = make()
    const increment = (store: QueueStore) =>
      store.update('k', (stored) => String(Number(stored ?? '0') + 1))
    await Promise.all(Array.from({ length: 100 }, (_, i) => increment(i % 2 === 0 ? a : b)))
    expect(await a.read('k')).toBe('100')
    expect(await b.read('k')).toBe('100')
  })

  it('writes what the change returns: null removes, undefined leaves it', async () => {
    const [store] = make()
    await store.update('k', () => 'one')
    await store.update('k', () => undefined)
    expect(await store.read('k')).toBe('one')
    await store.update('k', () => null)
    expect(await store.read('k')).toBeNull()
  })

  it('runs a change in a later task than its call', async () => {
    const [store] = make()
    const order: string[] = []
    const done = store.update('k', (stored) => {
      order.push('change')
      return stored
    })
    order.push('after the call')
    await done
    expect(order).toEqual(['after the call', 'change'])
  })

  it('tells every watcher of a key that it changed', async () => {
    const [a, b] = make()
    const heard: string[] = []
    const stop = b.watch('k', () => heard.push('b'))
    a.watch('other', () => heard.push('other'))
    await a.update('k', () => 'changed')
    await expect.poll(() => heard).toEqual(['b'])
    stop()
    await a.update('k', () => 'again')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(heard).toEqual(['b'])
  })
})
