import { describe, expect, it } from 'vitest'
import { createPersistentPreviewChat, type PreviewChatStorage } from '../persist'
import { textOf } from './harness'

function memoryStorage(): PreviewChatStorage & { items: Map<string, string> } {
  const items = new Map<string, string>()
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  }
}

/** Resolves once `check` holds, polling the backend (its turns run on real timers). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe('createPersistentPreviewChat', () => {
  it('keeps finished threads across a page load', async () => {
    const storage = memoryStorage()
    const first = await createPersistentPreviewChat({ storage, deltaMs: 0, snapshotMs: 5 })
    const seeded = await first.seed.thread({ messages: ['Hello there'] })
    first.save()
    await first.close()

    const second = await createPersistentPreviewChat({ storage, deltaMs: 0, snapshotMs: 5 })
    const history = second.backend.inspect.history(seeded.key.threadId, 'alice')
    expect(history?.messages.map((message) => message.role)).toEqual(['user', 'assistant'])
    expect(textOf(history?.messages[1])).toBe('You said (2 words): "Hello there"')
    await second.close()
  })

  it('runs a turn that was running on from where it was, and it ends with every delta once', async () => {
    const storage = memoryStorage()
    const first = await createPersistentPreviewChat({ storage, deltaMs: 0, snapshotMs: 5 })
    const seeded = await first.seed.runningTurn({ message: '/long 12', steps: 4 })
    expect(textOf(first.backend.inspect.history(seeded.key.threadId)?.messages[1])).toBe(
      'delta 1. delta 2. delta 3. delta 4. ',
    )
    first.save()
    await first.close() // the page went: its turn is interrupted with it

    const second = await createPersistentPreviewChat({ storage, deltaMs: 5, snapshotMs: 5 })
    const history = () => second.backend.inspect.history(seeded.key.threadId, 'alice')
    // At once, before a step more: what the page showed, and the turn running.
    expect(history()?.activeExecutionId).toEqual(expect.any(String))
    expect(textOf(history()?.messages[1])).toBe('delta 1. delta 2. delta 3. delta 4. ')
    await until(() => history()?.activeExecutionId === null, 'the restored turn to end')
    const messages = history()?.messages ?? []
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant'])
    expect(textOf(messages[1])).toBe(
      Array.from({ length: 12 }, (_, n) => `delta ${n + 1}. `).join(''),
    )
    expect(messages[1]?.executionStatus).toBe('success')
    await second.close()
  })

  it('starts empty when the storage holds nothing it can read, and forget() empties it', async () => {
    const storage = memoryStorage()
    storage.setItem('preview-chat-msw', '{"version": 0}')
    const mock = await createPersistentPreviewChat({ storage, deltaMs: 0, snapshotMs: 5 })
    expect(mock.backend.inspect.threads()).toEqual([])
    await mock.seed.thread()
    mock.save()
    expect(storage.items.size).toBe(1)
    mock.forget()
    expect(storage.items.size).toBe(0)
    await mock.close()
  })
})
