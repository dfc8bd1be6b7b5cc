/**
 * `navigator.locks` as a browser grants them (Web Locks API), shared by the tabs of an origin,
 * where an in-document mutex is kinder:
 *
 * - `request(name, [options], callback)`: the callback runs once the lock is granted (never
 *   inside the `request` call: a microtask later here, so fake timers need not advance), with a
 *   lock `{ name, mode }`; the lock is held until the promise the callback returned settles, and
 *   `request` settles as that promise does;
 * - modes: `exclusive` (the default) is held by one request at a time; `shared` by any number,
 *   while no `exclusive` one holds it; requests are granted in the order they were made;
 * - `ifAvailable: true`: granted now or never — the callback runs with `null` when it is held;
 * - `steal: true`: the holders lose it at once (their `request` promises reject with an
 *   `AbortError`) and this request is granted;
 * - `signal`: aborting a request not granted yet rejects it with the signal's reason;
 * - a tab that closes releases every lock it holds and drops what it was waiting for (its
 *   callbacks never run, its promises never settle: nothing of a closed tab runs);
 * - the options the API refuses throw a `NotSupportedError` (`steal` with `ifAvailable`, or with
 *   `shared`; `signal` with either), a name starting with `-` a `NotSupportedError` too.
 *
 * ```ts
 * const origin = lockOrigin()
 * const a = origin.tab(), b = origin.tab()
 * a.locks.request('sender', async () => { … }) // b's request waits until a's callback settles
 * a.close() // or until tab a closes
 * ```
 */

export interface LockLike {
  readonly name: string
  readonly mode: 'exclusive' | 'shared'
}

export interface LockOptions {
  mode?: 'exclusive' | 'shared'
  ifAvailable?: boolean
  steal?: boolean
  signal?: AbortSignal
}

/** The part of `LockManager` the stand-in has (`request`, `query`). */
export interface LockManagerStandIn {
  request<T>(name: string, callback: (lock: LockLike | null) => T): Promise<Awaited<T>>
  request<T>(
    name: string,
    options: LockOptions,
    callback: (lock: LockLike | null) => T,
  ): Promise<Awaited<T>>
  /** What is held and waited for, as `navigator.locks.query()` says it (with the tab's id as `clientId`). */
  query(): Promise<{
    held: { name: string; mode: string; clientId: string }[]
    pending: { name: string; mode: string; clientId: string }[]
  }>
}

export interface LockTab {
  /** `navigator.locks` of this tab. */
  readonly locks: LockManagerStandIn
  readonly id: string
  /** The tab is gone: its locks are released, its waiting requests dropped. */
  close(): void
}

export interface LockOrigin {
  tab(): LockTab
}

interface Request {
  name: string
  mode: 'exclusive' | 'shared'
  tab: string
  grant: () => void
  /** Rejects the request's promise (stolen, aborted). */
  fail: (reason: unknown) => void
}

export function lockOrigin(): LockOrigin {
  const held: Request[] = []
  const pending: Request[] = []
  let tabs = 0

  const conflicts = (a: Request, mode: Request['mode']) =>
    a.mode === 'exclusive' || mode === 'exclusive'
  const grantable = (request: Request, before: Request[]) =>
    !held.some((h) => h.name === request.name && conflicts(h, request.mode)) &&
    !before.some((p) => p.name === request.name)

  /** Grants, in order, every waiting request nothing before it blocks. */
  const pump = () => {
    for (let i = 0; i < pending.length; i++) {
      const request = pending[i]!
      if (!grantable(request, pending.slice(0, i))) continue
      pending.splice(i, 1)
      i--
      held.push(request)
      request.grant()
    }
  }
  const release = (request: Request) => {
    const at = held.indexOf(request)
    if (at !== -1) held.splice(at, 1)
    pump()
  }

  return {
    tab() {
      const id = `tab-${++tabs}`
      let closed = false
      const locks: LockManagerStandIn = {
        request(
          name: string,
          optionsOrCallback: LockOptions | ((lock: LockLike | null) => unknown),
          maybeCallback?: (lock: LockLike | null) => unknown,
        ) {
          const callback =
            typeof optionsOrCallback === 'function' ? optionsOrCallback : maybeCallback
          const options = typeof optionsOrCallback === 'function' ? {} : optionsOrCallback
          const mode = options.mode ?? 'exclusive'
          if (typeof callback !== 'function')
            return Promise.reject(new TypeError('navigator.locks.request needs a callback.'))
          if (name.startsWith('-'))
            return Promise.reject(
              new DOMException(
                `Lock names starting with '-' are reserved: '${name}'.`,
                'NotSupportedError',
              ),
            )
          if (
            (options.steal && (options.ifAvailable || mode === 'shared')) ||
            (options.signal && (options.steal || options.ifAvailable))
          )
            return Promise.reject(
              new DOMException(
                "The 'steal' option cannot be used with 'ifAvailable' or a shared mode, nor 'signal' with either.",
                'NotSupportedError',
              ),
            )
          if (options.signal?.aborted) return Promise.reject(options.signal.reason)
          return new Promise<unknown>((resolve, reject) => {
            const request: Request = {
              name,
              mode,
              tab: id,
              fail: reject,
              // Held from now; the callback runs a moment later, never inside the request call.
              grant: () => {
                options.signal?.removeEventListener('abort', onAbort)
                queueMicrotask(() => run())
              },
            }
            const run = () => {
              if (!held.includes(request)) return // its tab closed, or it was stolen, meanwhile
              let result: unknown
              try {
                result = callback({ name, mode })
              } catch (error) {
                release(request)
                reject(error)
                return
              }
              Promise.resolve(result).then(
                (value) => {
                  if (!held.includes(request)) return // stolen, or its tab closed
                  release(request)
                  resolve(value)
                },
                (error: unknown) => {
                  if (!held.includes(request)) return
                  release(request)
                  reject(error)
                },
              )
            }
            const onAbort = () => {
              const at = pending.indexOf(request)
              if (at === -1) return
              pending.splice(at, 1)
              reject(options.signal?.reason)
              pump()
            }
            if (closed) return // a closed tab runs nothing
            if (options.steal) {
              for (const holder of held.filter((h) => h.name === name)) {
                held.splice(held.indexOf(holder), 1)
                holder.fail(new DOMException('The lock was stolen.', 'AbortError'))
              }
              held.push(request)
              request.grant()
              return
            }
            if (options.ifAvailable && !grantable(request, pending)) {
              queueMicrotask(() => {
                try {
                  Promise.resolve(callback(null)).then(resolve, reject)
                } catch (error) {
                  reject(error)
                }
              })
              return
            }
            options.signal?.addEventListener('abort', onAbort, { once: true })
            pending.push(request)
            pump()
          }) as Promise<never>
        },
        query() {
          const show = (r: Request) => ({ name: r.name, mode: r.mode, clientId: r.tab })
          return Promise.resolve({ held: held.map(show), pending: pending.map(show) })
        },
      }
      return {
        locks,
        id,
        close() {
          closed = true
          for (const request of pending.filter((r) => r.tab === id))
            pending.splice(pending.indexOf(request), 1)
          for (const request of held.filter((r) => r.tab === id))
            held.splice(held.indexOf(request), 1)
          pump()
        },
      }
    },
  }
}
