/**
 * IndexedDB as browsers sometimes give it: `fake-indexeddb` (a faithful engine: transactions,
 * auto-commit, events) behind a factory the test can make unkind, as real profiles are:
 *
 * - `refuseOpen('throw')`: `indexedDB.open` throws at once (a `SecurityError`), as it does in
 *   locked-down profiles, sandboxed frames and some private modes;
 * - `refuseOpen('error')`: `open` returns a request that fires `error` a task later (its
 *   `error` an `InvalidStateError`, its `result` throwing), as Firefox's private mode did;
 * - `failWrites()`: a read-write transaction that writes aborts with a `QuotaExceededError`
 *   (its requests ran; the transaction's `abort` event comes instead of `complete`, nothing of it
 *   is kept), as a full disk or an exceeded origin quota does at commit.
 *
 * Each world is one origin's databases (a fresh `IDBFactory`); every tab of the origin shares it.
 *
 * ```ts
 * const idb = indexedDbWorld()
 * const store = indexedDbQueueStore(idb.indexedDB)
 * idb.refuseOpen('throw') // the next opens throw
 * idb.failWrites(1) // the next writing transaction aborts with QuotaExceededError
 * ```
 */
import { IDBFactory as FakeIDBFactory } from 'fake-indexeddb'

export interface IndexedDbWorld {
  /** The factory to hand to the code under test (`indexedDbQueueStore(world.indexedDB)`). */
  readonly indexedDB: IDBFactory
  /** How later `open` calls are refused (`false`: not). Opens already done stay open. */
  refuseOpen(how: 'throw' | 'error' | false): void
  /**
   * The next `count` read-write transactions that write (default: every one until told `false`)
   * abort with a `QuotaExceededError` instead of committing.
   */
  failWrites(count?: number | false): void
  /** `open` calls so far, refused ones included. */
  opens(): number
}

/** What the stand-in touches of fake-indexeddb's transaction (its abort with an error name). */
interface FakeTransaction {
  _state: string
  _abort(errorName: string | null): void
}

const WRITES = ['put', 'add', 'delete', 'clear'] as const

export function indexedDbWorld(): IndexedDbWorld {
  const factory = new FakeIDBFactory() as unknown as IDBFactory
  let refusing: 'throw' | 'error' | false = false
  let failing = 0
  let opens = 0
  const patched = new WeakSet<object>()

  /** Aborts `transaction` with a QuotaExceededError once the write's event has run. */
  const overQuota = (transaction: IDBTransaction) => () =>
    queueMicrotask(() => {
      const fake = transaction as unknown as FakeTransaction
      if (fake._state === 'finished') return
      fake._state = 'active'
      fake._abort('QuotaExceededError')
    })

  const patchStore = (store: IDBObjectStore, transaction: IDBTransaction) => {
    if (patched.has(store)) return store
    patched.add(store)
    for (const method of WRITES) {
      const original = store[method].bind(store) as (...args: unknown[]) => IDBRequest
      ;(store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const request = original(...args)
        if (failing > 0 && !patched.has(transaction)) {
          patched.add(transaction)
          failing--
        }
        if (patched.has(transaction)) request.addEventListener('success', overQuota(transaction))
        return request
      }
    }
    return store
  }

  const patchDatabase = (db: IDBDatabase) => {
    if (patched.has(db)) return
    patched.add(db)
    const transaction = db.transaction.bind(db)
    db.transaction = ((...args: Parameters<IDBDatabase['transaction']>) => {
      const opened = transaction(...args)
      const objectStore = opened.objectStore.bind(opened)
      opened.objectStore = (name: string) => patchStore(objectStore(name), opened)
      return opened
    }) as IDBDatabase['transaction']
  }

  /** An open request the browser refused: `error` a task later. */
  const refusedRequest = (): IDBOpenDBRequest => {
    const request = new EventTarget() as EventTarget & Record<string, unknown>
    const error = new DOMException(
      'A mutation operation was attempted on a database that did not allow mutations.',
      'InvalidStateError',
    )
    Object.assign(request, {
      onsuccess: null,
      onerror: null,
      onupgradeneeded: null,
      onblocked: null,
      readyState: 'pending',
      error: null,
      source: null,
      transaction: null,
    })
    Object.defineProperty(request, 'result', {
      get() {
        throw new DOMException('The request has not finished, or failed.', 'InvalidStateError')
      },
    })
    globalThis.setTimeout(() => {
      request.readyState = 'done'
      request.error = error
      const event = new Event('error', { bubbles: true, cancelable: true })
      ;(request.onerror as ((event: Event) => void) | null)?.call(request, event)
      request.dispatchEvent(event)
    }, 0)
    return request as unknown as IDBOpenDBRequest
  }

  const wrapped = {
    open(name: string, version?: number) {
      opens++
      if (refusing === 'throw')
        throw new DOMException('The operation is insecure.', 'SecurityError')
      if (refusing === 'error') return refusedRequest()
      const request = factory.open(name, version)
      const patch = () => {
        if (request.readyState === 'done' && !request.error) patchDatabase(request.result)
      }
      request.addEventListener('upgradeneeded', patch)
      request.addEventListener('success', patch)
      return request
    },
    deleteDatabase: (name: string) => factory.deleteDatabase(name),
    cmp: (a: unknown, b: unknown) => factory.cmp(a, b),
    databases: () => factory.databases(),
  }

  return {
    indexedDB: wrapped as IDBFactory,
    refuseOpen(how) {
      refusing = how
    },
    failWrites(count = Number.POSITIVE_INFINITY) {
      failing = count === false ? 0 : count
    },
    opens: () => opens,
  }
}
