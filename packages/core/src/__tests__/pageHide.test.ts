/**
 * `pagehide` is heard in one place, `platform/pageHide.ts` (`onPageHide`): the transcripts'
 * persistence (its live text, and each attached scope's throttled write) and the queue's host (a
 * page being left writes what its transaction has not) all listen through it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { QueryClient } from '@tanstack/query-core'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { EngineAction } from '../engine/model'
import { persistTranscripts } from '../effects/persistence'
import { queueHost } from '../effects/queueHost'
import { memoryQueueStore } from '../effects/queueStore'
import type { Transport } from '../wire/transport'
import { onPageHide } from '../platform/pageHide'
import { storageOrigin } from './world/storage'

vi.mock('../platform/pageHide', async (actual) => {
  const real = await actual<{ onPageHide: typeof onPageHide }>()
  // Each call's stop is a spy too: a caller that stops listening is seen to.
  const spied: typeof onPageHide = (listener, target) => vi.fn(real.onPageHide(listener, target))
  return { ...real, onPageHide: vi.fn(spied) }
})

/** A page's window as far as `pagehide` goes: it says when it is left. */
function fakePage() {
  const target = new EventTarget()
  return { target, leave: () => target.dispatchEvent(new Event('pagehide')) }
}

/** The global scope is the page (as in a browser) until the test ends. */
function globalPage() {
  const page = fakePage()
  vi.stubGlobal('addEventListener', page.target.addEventListener.bind(page.target))
  vi.stubGlobal('removeEventListener', page.target.removeEventListener.bind(page.target))
  return page
}

afterEach(() => {
  vi.unstubAllGlobals()
  vi.mocked(onPageHide).mockClear()
})

describe('onPageHide', () => {
  it('calls the listener each time the page is left, until it stops listening', () => {
    const page = fakePage()
    const heard = vi.fn()
    const stop = onPageHide(heard, page.target)
    page.leave()
    page.leave()
    expect(heard).toHaveBeenCalledTimes(2)
    stop()
    page.leave()
    expect(heard).toHaveBeenCalledTimes(2)
  })

  it('hears the global scope by default, read when called', () => {
    const page = globalPage()
    const heard = vi.fn()
    const stop = onPageHide(heard)
    page.leave()
    expect(heard).toHaveBeenCalledOnce()
    stop()
    page.leave()
    expect(heard).toHaveBeenCalledOnce()
  })

  it('is a no-op where there is no page (a server, Node)', () => {
    expect(typeof (globalThis as Partial<EventTarget>).addEventListener).toBe('undefined')
    const stop = onPageHide(() => {})
    expect(() => stop()).not.toThrow()
    expect(() => onPageHide(() => {}, {})()).not.toThrow()
  })
})

describe('every listener of pagehide goes through onPageHide', () => {
  it('the transcripts: the live text, and each scope attached, written when the page is left', () => {
    const page = globalPage()
    const storage = storageOrigin().tab().sessionStorage
    const persist = persistTranscripts({ storage, throttleMs: 60_000 })
    // Nothing is heard before a client attaches (a persistence made and never used holds nothing).
    expect(onPageHide).not.toHaveBeenCalled()
    const timers = { setTimeout: () => 1, clearTimeout: () => {}, now: () => 0 }
    const detach = persist.attach(new QueryClient(), 's', timers, () => {})
    // The live text's listener, and the scope's.
    expect(onPageHide).toHaveBeenCalledTimes(2)

    // A live turn kept throttled is written when the page is left, not before.
    persist.keepLive('s', 't', null)
    storage.setItem('preview-chat:live:s:t', 'stale')
    page.leave()
    expect(storage.getItem('preview-chat:live:s:t')).toBeNull()

    // Detached, the scope stops listening through its `onPageHide`'s stop.
    const stop = vi.mocked(onPageHide).mock.results[1]?.value as () => void
    expect(stop).not.toHaveBeenCalled()
    detach()
    expect(stop).toHaveBeenCalledOnce()
  })

  it('the live text is heard while a scope is attached: the last one detached writes it and stops', () => {
    const page = globalPage()
    const storage = storageOrigin().tab().sessionStorage
    const timers = { setTimeout: () => 1, clearTimeout: () => {}, now: () => 0 }
    const persist = persistTranscripts({ storage, throttleMs: 60_000 })
    const detachA = persist.attach(new QueryClient(), 'a', timers, () => {})
    const detachB = persist.attach(new QueryClient(), 'b', timers, () => {})
    // One listener for the live text (the first attach's), one per scope.
    expect(onPageHide).toHaveBeenCalledTimes(3)
    const live = vi.mocked(onPageHide).mock.results[0]?.value as () => void

    persist.keepLive('b', 't', null)
    storage.setItem('preview-chat:live:b:t', 'stale')
    detachA()
    expect(live).not.toHaveBeenCalled()
    expect(storage.getItem('preview-chat:live:b:t')).toBe('stale')
    page.leave()
    expect(storage.getItem('preview-chat:live:b:t')).toBeNull()

    // The last scope gone: the pending live text is written then, and the page is heard no more.
    persist.keepLive('b', 't', null)
    storage.setItem('preview-chat:live:b:t', 'stale again')
    detachB()
    expect(live).toHaveBeenCalledOnce()
    expect(storage.getItem('preview-chat:live:b:t')).toBeNull()

    // Clients made and disposed over and over leave no listener behind.
    for (let i = 0; i < 5; i++)
      persistTranscripts({ storage }).attach(new QueryClient(), 'c', timers, () => {})()
    const stops = vi.mocked(onPageHide).mock.results.map((result) => result.value as () => void)
    expect(stops).toHaveLength(3 + 5 * 2)
    for (const stopped of stops) expect(stopped).toHaveBeenCalledOnce()
  })

  it("the queue's host: a page being left says `queue-leaving`, until the queue closes", () => {
    const page = globalPage()
    const actions: EngineAction[] = []
    const host = queueHost(
      (action) => void actions.push(action),
      {
        queryKey: ['preview-chat', '', 'p', 'a', 't'],
        warn: () => {},
        timers: { setTimeout: () => 1, clearTimeout: () => {}, now: () => 0 },
        transport: {} as Transport,
        listenToPush: () => () => {},
      },
      {
        whenStopped: 'keep',
        store: memoryQueueStore(),
        fallback: memoryQueueStore,
        locks: { request: () => new Promise(() => {}) },
      },
    )
    host.perform({ type: 'queue-open' })
    expect(onPageHide).toHaveBeenCalledOnce()
    page.leave()
    expect(actions).toContainEqual({ type: 'queue-leaving' })

    host.perform({ type: 'queue-close' })
    expect(vi.mocked(onPageHide).mock.results[0]?.value).toHaveBeenCalled()
    const before = actions.length
    page.leave()
    expect(actions).toHaveLength(before)
  })

  it('no other source file names the event', () => {
    const src = join(__dirname, '..')
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? entry.name === '__tests__'
            ? []
            : files(join(dir, entry.name))
          : entry.name.endsWith('.ts')
            ? [join(dir, entry.name)]
            : [],
      )
    const naming = files(src).filter((file) => /['"]pagehide['"]/.test(readFileSync(file, 'utf8')))
    expect(naming.map((file) => file.slice(src.length + 1))).toEqual(['platform/pageHide.ts'])
  })
})
