import type { RequestHandler } from 'msw'
import { http } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import type { PreviewChatMock } from '../handlers'

// msw's browser worker needs a service worker; here it is a recorder of what the loader asks.
const worker = vi.hoisted(() => ({
  starts: [] as unknown[],
  handlers: [] as RequestHandler[],
}))
vi.mock('msw/browser', () => ({
  setupWorker: () => ({
    start: (options: unknown) => {
      worker.starts.push(options)
      return Promise.resolve()
    },
    resetHandlers: (...handlers: RequestHandler[]) => {
      worker.handlers = handlers
    },
  }),
}))
vi.stubGlobal('document', { cookie: '' })

const { previewChatLoader, previewChatOf } = await import('../storybook')

const story = (previewChat?: unknown) => ({ parameters: previewChat ? { previewChat } : {} })

describe('previewChatLoader, the Storybook wiring', () => {
  it('starts the worker once and gives every story a fresh backend, closing the last one', async () => {
    const loader = previewChatLoader({ user: 'alice', deltaMs: 0, snapshotMs: 5 })
    const first = previewChatOf({ loaded: await loader(story()) }).mock
    const { key } = await first.seed.thread({ messages: ['Hello'] })
    const close = vi.spyOn(first, 'close')

    const second = previewChatOf({ loaded: await loader(story()) }).mock
    expect(close).toHaveBeenCalledOnce()
    expect(second).not.toBe(first)
    expect(second.backend.inspect.history(key.threadId)).toBeUndefined()
    expect(worker.starts).toEqual([{ onUnhandledRequest: 'bypass', quiet: true }])
    expect(worker.handlers).toEqual(second.handlers)
    await second.close()
  })

  it("applies a story's options, handlers and setup", async () => {
    const loader = previewChatLoader({ user: 'alice', deltaMs: 0, snapshotMs: 5 })
    const hold = http.get('*/rest/hold', () => undefined)
    const loaded = await loader(
      story({
        options: { user: 'bob' },
        handlers: [hold],
        setup: (mock: PreviewChatMock) => mock.seed.thread(),
      }),
    )
    const { mock, setup } = previewChatOf<{ key: { threadId: string }; user: string }>({ loaded })
    expect(mock.user).toBe('bob')
    expect(setup.user).toBe('bob')
    expect(worker.handlers[0]).toBe(hold)
    expect(mock.backend.inspect.history(setup.key.threadId, 'bob')).toBeDefined()
    await mock.close()
  })

  it('mounts nothing for a story that turns it off, and says so when read', async () => {
    const loader = previewChatLoader()
    const loaded = await loader(story({ enabled: false }))
    expect(worker.handlers).toEqual([])
    expect(() => previewChatOf({ loaded })).toThrow(/no preview-chat backend/)
  })
})
